package store

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// Runs live in <Name>_RUNS: the checkpoint of run R under c.<R> (one
// revision kept: the latest), the record of its call C under i.<R>.<C>.

func checkpointKey(run string) string { return "c." + storeKey(run) }
func callsFilter(run string) string   { return "i." + storeKey(run) + ".>" }
func callKey(run, call string) string { return "i." + storeKey(run) + "." + storeKey(call) }

// LoadCheckpoint returns the latest checkpoint of run.
func (s *jsStore) LoadCheckpoint(ctx context.Context, run string) (*agent.Checkpoint, error) {
	if run == "" {
		return nil, invalid("load checkpoint", "the run id is empty")
	}
	cp := new(agent.Checkpoint)
	if _, _, err := s.runs.load(ctx, checkpointKey(run), "checkpoint of run", run, cp); err != nil {
		return nil, err
	}
	return cp, nil
}

// SaveCheckpoint replaces (or, with expect 0, creates) the checkpoint of
// cp.Run if its revision is expect: one write, revision-checked by the
// server, when this process wrote or read the checkpoint last.
func (s *jsStore) SaveCheckpoint(ctx context.Context, cp *agent.Checkpoint, expect uint64) (uint64, error) {
	if cp == nil {
		return 0, invalid("save checkpoint", "the checkpoint is nil")
	}
	if cp.Run == "" {
		return 0, invalid("save checkpoint", "the run id is empty")
	}
	c := *cp
	c.V, c.Revision, c.Updated = 1, expect+1, time.Now()
	data, err := s.encodeRecord("checkpoint", &c)
	if err != nil {
		return 0, err
	}
	ttl := s.cfg.RunTTL
	if c.State == agent.RunDone || c.State == agent.RunFailed {
		ttl = s.cfg.FinishedTTL
	}
	if err := s.runs.write(ctx, checkpointKey(c.Run), "checkpoint of run", c.Run, data, expect, 0, ttl); err != nil {
		return 0, err
	}
	return c.Revision, nil
}

// ListRuns returns the ids of the runs that have a checkpoint.
func (s *jsStore) ListRuns(ctx context.Context) ([]string, error) {
	keys, err := s.runs.d.keys(ctx, "c.>")
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		id, err := idOfKey(k[len("c."):])
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// DeleteRun removes the checkpoint and the call records of run.
func (s *jsStore) DeleteRun(ctx context.Context, run string) error {
	if run == "" {
		return invalid("delete run", "the run id is empty")
	}
	keys, err := s.runs.d.keys(ctx, callsFilter(run))
	if err != nil {
		return err
	}
	for _, k := range append(keys, checkpointKey(run)) {
		if err := s.runs.del(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// PutIntent records that the call c.Call of run c.Run is about to run:
// a create, so a second intent of the same call is a Conflict.
func (s *jsStore) PutIntent(ctx context.Context, c *agent.CallRecord) error {
	if c == nil || c.Run == "" || c.Call == "" {
		return invalid("put intent", "an intent needs a run id and a call id")
	}
	r := *c
	r.V, r.Started, r.Result, r.Finished = 1, time.Now(), nil, time.Time{}
	data, err := s.encodeRecord("call", &r)
	if err != nil {
		return err
	}
	_, err = s.runs.d.put(ctx, callKey(r.Run, r.Call), data, 0, s.cfg.RunTTL)
	if errors.Is(err, failure.Conflict) {
		return conflict("call", r.Run+"/"+r.Call, "has an intent already: a call is started at most once")
	}
	return err
}

// PutCallHandle records c.Handle for a call that has an intent and no
// result, replacing the handle it had (a revision-checked write).
func (s *jsStore) PutCallHandle(ctx context.Context, c *agent.CallRecord) error {
	if c == nil || c.Run == "" || c.Call == "" || len(c.Handle) == 0 {
		return invalid("put call handle", "a call handle needs a run id, a call id and a handle")
	}
	return s.updateOpenCall(ctx, "put call handle", c, func(r *agent.CallRecord) { r.Handle = c.Handle },
		"changed meanwhile (a result or another handle was recorded)")
}

// PutCallResult records c.Result for a call that has an intent.
func (s *jsStore) PutCallResult(ctx context.Context, c *agent.CallRecord) error {
	if c == nil || c.Run == "" || c.Call == "" || c.Result == nil {
		return invalid("put call result", "a call result needs a run id, a call id and a result")
	}
	return s.updateOpenCall(ctx, "put call result", c, func(r *agent.CallRecord) { r.Result, r.Finished = c.Result, time.Now() },
		"has a result already")
}

// updateOpenCall applies set to the record of c's call, which must have an
// intent and no result yet, in a write checked against the revision read;
// raced is the conflict's reason when another write came between.
func (s *jsStore) updateOpenCall(ctx context.Context, op string, c *agent.CallRecord, set func(*agent.CallRecord), raced string) error {
	key, id := callKey(c.Run, c.Call), c.Run+"/"+c.Call
	data, seq, err := s.runs.d.get(ctx, key)
	if errors.Is(err, failure.NotFound) {
		return notFound("intent of call", id)
	}
	if err != nil {
		return err
	}
	var r agent.CallRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return protocolError("store "+op, err)
	}
	if r.Result != nil {
		return conflict("call", id, "has a result already")
	}
	set(&r)
	if data, err = s.encodeRecord("call", &r); err != nil {
		return err
	}
	if _, err = s.runs.d.put(ctx, key, data, seq, s.cfg.RunTTL); errors.Is(err, failure.Conflict) {
		return conflict("call", id, raced)
	}
	return err
}

// LoadCalls returns the call records of run, in the order of their intents.
func (s *jsStore) LoadCalls(ctx context.Context, run string) ([]agent.CallRecord, error) {
	if run == "" {
		return nil, invalid("load calls", "the run id is empty")
	}
	calls, err := scan[agent.CallRecord](ctx, s.runs, callsFilter(run), time.Now())
	if err != nil {
		return nil, err
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].Started.Before(calls[j].Started) })
	return calls, nil
}
