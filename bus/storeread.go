package bus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// last reads key's value and revision. A bucket with one copy is read
// with a direct get (nats.go's KeyValue.Get); a replicated one is read
// through its stream's leader, because a direct get may be answered by a
// follower that has not yet applied a write another process has just made
// (a checkpoint saved on one replica read back stale on another), and a
// reader of the store must see every write acknowledged before its read.
func (d *durableKV) last(ctx context.Context, key string) ([]byte, uint64, error) {
	if !d.leaderReads {
		e, err := d.kv.Get(ctx, key)
		if err != nil {
			return nil, 0, err
		}
		return e.Value(), e.Revision(), nil
	}
	req, _ := json.Marshal(map[string]string{"last_by_subj": d.subject + key})
	msg, err := d.b.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+d.stream.CachedInfo().Config.Name, req)
	if err != nil {
		return nil, 0, err
	}
	var res struct {
		Message *struct {
			Seq  uint64 `json:"seq"`
			Hdrs []byte `json:"hdrs"`
			Data []byte `json:"data"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &res); err != nil {
		return nil, 0, fmt.Errorf("the stream leader's answer: %w", err)
	}
	switch {
	case res.Error != nil && res.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, 0, jetstream.ErrKeyNotFound
	case res.Error != nil:
		return nil, 0, res.Error
	case res.Message == nil:
		return nil, 0, fmt.Errorf("the stream leader's answer has no message")
	}
	if len(res.Message.Hdrs) > 0 {
		h, err := nats.DecodeHeadersMsg(res.Message.Hdrs)
		if err != nil {
			return nil, 0, fmt.Errorf("the stream leader's answer: %w", err)
		}
		if h.Get("KV-Operation") != "" || h.Get(jetstream.MarkerReasonHeader) != "" {
			return nil, 0, jetstream.ErrKeyNotFound // deleted, purged or expired
		}
	}
	return res.Message.Data, res.Message.Seq, nil
}
