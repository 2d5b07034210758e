package bus

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

// durableKV is one JetStream KV bucket of the durable store (storejs.go):
// revision-checked writes of opaque values, with values over the server's
// maximum message size kept in the store's object store and a small pointer
// in the bucket. The bucket keeps one revision per key (the latest), and
// its MaxAge, when set, expires a key that has not been written for that
// long.
type durableKV struct {
	b      *Bus
	kv     jetstream.KeyValue
	blobs  *blobStore
	bucket string
	key    failure.Key
}

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
// buckets. known remembers, per bucket key, the object this process last
// wrote or read for it, so that the object a later write replaces is
// deleted at once; objects left by a crash between the two writes (or
// replaced by another process) expire with the bucket's MaxAge, or go with
// their key's deletion.
type blobStore struct {
	b      *Bus
	obs    jetstream.ObjectStore
	inline int // values up to this size stay in the bucket
	key    failure.Key

	mu    sync.Mutex
	known map[string]string
}

// openDurableKV creates or updates bucket (file storage, one revision per
// key, maxAge 0 = no expiry).
func openDurableKV(ctx context.Context, b *Bus, bucket, desc string, maxAge time.Duration, replicas int, blobs *blobStore) (*durableKV, error) {
	d := &durableKV{b: b, blobs: blobs, bucket: bucket, key: failure.Key{Source: failure.SourceBus, Name: "store:" + bucket}}
	err := b.jetStreamAdmin(ctx, d.key, "open store", func(ctx context.Context) error {
		kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: bucket, Description: desc, History: 1, TTL: maxAge, Replicas: replicas,
			Storage: jetstream.FileStorage,
		})
		d.kv = kv
		return err
	})
	if err != nil {
		return nil, b.wrap(err, "open store", "the durable store's bucket "+bucket+" could not be opened")
	}
	return d, nil
}

// openBlobStore creates or updates the object store of large values.
func openBlobStore(ctx context.Context, b *Bus, bucket string, maxAge time.Duration, replicas, inline int) (*blobStore, error) {
	s := &blobStore{b: b, inline: inline, key: failure.Key{Source: failure.SourceBus, Name: "store:" + bucket}, known: map[string]string{}}
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

func (d *durableKV) exec(ctx context.Context, op string, f func(context.Context) error) error {
	return d.b.policy.Execute(ctx, d.key, func(ctx context.Context) error { return d.b.classifyConn(f(ctx), op) })
}

// get returns key's value and revision; a missing (or expired) key is a
// NotFound failure.
func (d *durableKV) get(ctx context.Context, key string) ([]byte, uint64, error) {
	var e jetstream.KeyValueEntry
	if err := d.exec(ctx, "store get", func(ctx context.Context) (err error) {
		e, err = d.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyDeleted) {
			err = jetstream.ErrKeyNotFound
		}
		return err
	}); err != nil {
		return nil, 0, err
	}
	data, err := d.blobs.resolve(ctx, d.bucket+"/"+key, e.Value())
	return data, e.Revision(), err
}

// put writes value under key if the key's revision is rev (0: the key
// must not exist), and returns the new revision; a stale revision or an
// existing key is a Conflict failure.
func (d *durableKV) put(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	id := d.bucket + "/" + key
	stored, obj, err := d.blobs.store(ctx, id, value)
	if err != nil {
		return 0, err
	}
	var next uint64
	err = d.exec(ctx, "store put", func(ctx context.Context) (err error) {
		if rev == 0 {
			next, err = d.kv.Create(ctx, key, stored)
		} else {
			next, err = d.kv.Update(ctx, key, stored, rev)
		}
		return err
	})
	if err != nil {
		d.blobs.drop(obj) // the write lost: its object is nobody's
		return 0, err
	}
	d.blobs.replaced(id, obj)
	return next, nil
}

// del deletes key (rev 0: whatever its revision; a missing key is not an
// error) and its object, if this process knows it.
func (d *durableKV) del(ctx context.Context, key string, rev uint64) error {
	err := d.exec(ctx, "store delete", func(ctx context.Context) error {
		var opts []jetstream.KVDeleteOpt
		if rev != 0 {
			opts = append(opts, jetstream.LastRevision(rev))
		}
		err := d.kv.Purge(ctx, key, opts...)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	if err == nil {
		d.blobs.replaced(d.bucket+"/"+key, "")
	}
	return err
}

// keys lists the keys matching filter (a subject pattern, e.g. "q.>").
func (d *durableKV) keys(ctx context.Context, filter string) ([]string, error) {
	var keys []string
	err := d.exec(ctx, "store list", func(ctx context.Context) error {
		keys = keys[:0]
		l, err := d.kv.ListKeysFiltered(ctx, filter)
		if err != nil {
			if errors.Is(err, jetstream.ErrNoKeysFound) {
				return nil
			}
			return err
		}
		defer func() { _ = l.Stop() }()
		for k := range l.Keys() {
			keys = append(keys, k)
		}
		return nil
	})
	return keys, err
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
	err = s.b.policy.Execute(ctx, s.key, func(ctx context.Context) error {
		_, err := s.obs.PutBytes(ctx, obj, value)
		return s.b.classifyConn(err, "store put object")
	})
	if err != nil {
		return nil, "", err
	}
	ref, _ := json.Marshal(blobRef{V: version, Obj: obj, Size: len(value)})
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
	if err := checkVersion("store get", ref.V); err != nil {
		return nil, err
	}
	var data []byte
	err := s.b.policy.Execute(ctx, s.key, func(ctx context.Context) (err error) {
		data, err = s.obs.GetBytes(ctx, ref.Obj)
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
	s.known[id] = ref.Obj
	s.mu.Unlock()
	return data, nil
}

// replaced records that id now holds obj ("" for an inline value or a
// deletion) and deletes the object it held before, if known.
func (s *blobStore) replaced(id, obj string) {
	s.mu.Lock()
	old := s.known[id]
	if obj == "" {
		delete(s.known, id)
	} else {
		s.known[id] = obj
	}
	s.mu.Unlock()
	if old != "" && old != obj {
		s.drop(old)
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

// dropTimeout bounds the deletion of a replaced object.
const dropTimeout = 5 * time.Second

// storeKey makes a KV key of an id given from outside: ids made of
// letters, digits, '-' and '_' are kept (readable keys); any other id is
// base64url-encoded behind '='.
func storeKey(id string) string {
	if id != "" && len(id) <= 200 && strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0 {
		return id
	}
	return "=" + base64.RawURLEncoding.EncodeToString([]byte(id))
}

// idOfKey is the inverse of storeKey.
func idOfKey(key string) (string, error) {
	if !strings.HasPrefix(key, "=") {
		return key, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(key[1:])
	if err != nil {
		return "", protocolError("store list", fmt.Errorf("malformed key %q", key))
	}
	return string(b), nil
}
