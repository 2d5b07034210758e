package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// blobPrefix starts a bucket value that points to an object (the record
// itself, JSON, starts with '{' or '[').
const blobPrefix = '@'

// blobRef is the pointer a bucket value holds for a large value.
type blobRef struct {
	V    int    `json:"v"`
	Obj  string `json:"obj"`
	Size int    `json:"size"`
}

// blobStore is the object store of large values, shared by the store's
// buckets. known remembers, per bucket key, the objects this process last
// wrote or read for it (the current one and the one before), so that a
// replaced object is deleted one write later (a reader that has just read
// the previous pointer still finds its object); objects left by a crash between the two writes (or
// replaced by another process) expire with the bucket's MaxAge, or go with
// their key's deletion.
type blobStore struct {
	b      *jsConn
	obs    jetstream.ObjectStore
	inline int // values up to this size stay in the bucket
	key    failure.Key

	mu    sync.Mutex
	known map[string][2]string
}

// openBlobStore creates or updates the object store of large values.
func openBlobStore(ctx context.Context, b *jsConn, bucket string, maxAge time.Duration, replicas, inline int) (*blobStore, error) {
	s := &blobStore{b: b, inline: inline, key: failure.Key{Source: failure.SourceBus, Name: "store:" + bucket}, known: map[string][2]string{}}
	err := b.jetStreamAdmin(ctx, s.key, "open store", func(ctx context.Context) error {
		obs, err := b.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: bucket, Description: "Switchboard durable values over the maximum message size",
			TTL: maxAge, Replicas: replicas, Storage: jetstream.FileStorage,
		})
		s.obs = obs
		return err
	})
	if err != nil {
		return nil, b.wrap(err, "open store", "the durable store's object store could not be opened")
	}
	return s, nil
}

// blobName is the object a bucket value points to ("" for an inline one).
func blobName(stored []byte) string {
	var ref blobRef
	if len(stored) == 0 || stored[0] != blobPrefix || json.Unmarshal(stored[1:], &ref) != nil {
		return ""
	}
	return ref.Obj
}

// store returns what the bucket holds for value: value itself, or, when it
// is larger than the inline limit, a pointer to a new object (named obj).
func (s *blobStore) store(ctx context.Context, id string, value []byte) (stored []byte, obj string, err error) {
	if len(value) <= s.inline {
		if len(value) > 0 && value[0] == blobPrefix {
			return nil, "", &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "store put",
				Message: "a durable record must not start with '@'"}
		}
		return value, "", nil
	}
	obj = id + "/" + rand.Text()
	err = s.b.pol().Execute(ctx, s.key, func(ctx context.Context) error {
		_, err := s.obs.PutBytes(ctx, obj, value)
		return s.b.classifyConn(err, "store put object")
	})
	if err != nil {
		return nil, "", err
	}
	ref, _ := json.Marshal(blobRef{V: wire.Version, Obj: obj, Size: len(value)})
	return append([]byte{blobPrefix}, ref...), obj, nil
}

// resolve returns the value a bucket value stands for, reading its object
// if it is a pointer.
func (s *blobStore) resolve(ctx context.Context, id string, stored []byte) ([]byte, error) {
	if len(stored) == 0 || stored[0] != blobPrefix {
		return stored, nil
	}
	var ref blobRef
	if err := json.Unmarshal(stored[1:], &ref); err != nil || ref.Obj == "" {
		return nil, protocolError("store get", fmt.Errorf("malformed object pointer: %v", err))
	}
	if err := wire.CheckVersion("store get", ref.V); err != nil {
		return nil, err
	}
	var data []byte
	err := s.b.pol().Execute(ctx, s.key, func(ctx context.Context) (err error) {
		// A deleted object's chunks are not awaited beyond this.
		octx, cancel := context.WithTimeout(ctx, objectReadTimeout+time.Duration(ref.Size>>20)*time.Second)
		defer cancel()
		data, err = s.obs.GetBytes(octx, ref.Obj)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return &failure.Error{Kind: failure.NotFound, Source: failure.SourceBus, Op: "store get object", Err: err,
				Message: "the record's object is gone (expired)"}
		}
		return s.b.classifyConn(err, "store get object")
	})
	if err != nil {
		return nil, err
	}
	if len(data) != ref.Size {
		return nil, protocolError("store get", fmt.Errorf("object %s has %d bytes, the pointer says %d", ref.Obj, len(data), ref.Size))
	}
	s.mu.Lock()
	if gen := s.known[id]; gen[0] != ref.Obj {
		s.known[id] = [2]string{ref.Obj, gen[0]}
	}
	s.mu.Unlock()
	return data, nil
}

// replaced records that id now holds obj ("" for an inline value or a
// deletion) and deletes the object it held two writes ago (on a deletion,
// every object it held).
func (s *blobStore) replaced(id, obj string) {
	s.mu.Lock()
	gen := s.known[id]
	var drop []string
	if obj == "" && gen[0] == "" && gen[1] == "" {
		s.mu.Unlock()
		return
	}
	switch {
	case obj == "":
		drop = gen[:]
		delete(s.known, id)
	case obj != gen[0]:
		drop = gen[1:]
		s.known[id] = [2]string{obj, gen[0]}
	}
	s.mu.Unlock()
	for _, o := range drop {
		s.drop(o)
	}
}

// drop deletes an object nobody points to any more, bounded by
// dropTimeout (a failure leaves it to expire).
func (s *blobStore) drop(obj string) {
	if obj == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	if err := s.obs.Delete(ctx, obj); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		s.b.log.Debug().Err(err).Str("object", obj).Msg("store: an orphaned object could not be deleted")
	}
}

// objectReadTimeout bounds the read of an object, plus a second per MiB.
const objectReadTimeout = 2 * time.Second

// dropTimeout bounds the deletion of a replaced object.
const dropTimeout = 5 * time.Second
