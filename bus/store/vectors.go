package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// VectorsConfig configures the store of tool vectors ([OpenVectors]). The
// zero value means the defaults shown.
type VectorsConfig struct {
	// Name prefixes the object store: <Name>_VECTORS (default: the bus's
	// stream name, e.g. SWITCHBOARD).
	Name string
	// Replicas is the number of copies of the store in a cluster (default 1).
	Replicas int
	// TTL is how long a vector is kept after it was written (default 30
	// days, so the vectors of tools no server lists any more go; negative:
	// forever). A vector that expired is embedded again on its next use.
	TTL time.Duration
	// MaxBytes bounds the store (default 256 MiB: some 40,000 vectors of
	// 1,536 dimensions).
	MaxBytes int64
	// Concurrency bounds the objects read or written at once by one call
	// (default 16).
	Concurrency int
	// Logger receives the store's few logs (nil: none).
	Logger *zerolog.Logger
	// Policy runs every operation (retries, a circuit for the store) and
	// handles its failures (nil: failure.Default, asked at each use).
	Policy failure.Policy
}

// vectorStore is agent.VectorStore on a JetStream object store: one
// object per vector, named by its key in hex, holding the vector's
// float32s (vectorMagic, the dimension, then each value, little-endian).
type vectorStore struct {
	b    *jsConn
	obs  jetstream.ObjectStore
	key  failure.Key
	conc int
}

var _ agent.VectorStore = (*vectorStore)(nil)

// OpenVectors opens (creating it if needed) the object store of tools'
// vectors on the bus's JetStream, shared by every process and replica
// connected to the same NATS: give it to [agent.Config].Vectors (or
// [agent.ToolIndex.WithVectorStore]) and each tool is embedded once for
// all of them, and across their restarts.
func OpenVectors(ctx context.Context, b *bus.Bus, cfg VectorsConfig) (agent.VectorStore, error) {
	if b == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "store.OpenVectors needs a bus")
	}
	c := connOf(b, cfg.Policy, cfg.Logger)
	if cfg.Name == "" {
		cfg.Name = c.stream
	}
	bucket := bucketPrefix(cfg.Name) + "_VECTORS"
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	switch {
	case cfg.TTL == 0:
		cfg.TTL = 30 * 24 * time.Hour
	case cfg.TTL < 0:
		cfg.TTL = 0
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 256 << 20
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	s := &vectorStore{b: c, key: failure.Key{Source: failure.SourceBus, Name: "store:" + bucket}, conc: cfg.Concurrency}
	err := c.jetStreamAdmin(ctx, s.key, "open vectors", func(ctx context.Context) error {
		obs, err := c.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: bucket, Description: "Switchboard tool vectors, by a hash of the embedding model and the tool's definition",
			TTL: cfg.TTL, MaxBytes: cfg.MaxBytes, Replicas: cfg.Replicas, Storage: jetstream.FileStorage,
		})
		s.obs = obs
		return err
	})
	if err != nil {
		return nil, c.wrap(err, "open vectors", "the tool-vector store "+bucket+" could not be opened")
	}
	return s, nil
}

// LoadVectors reads the vectors of keys, nil for those the store does not
// have (or whose object is not a vector: logged).
func (s *vectorStore) LoadVectors(ctx context.Context, keys []agent.VectorKey) ([][]float32, error) {
	out := make([][]float32, len(keys))
	err := s.each(ctx, len(keys), func(ctx context.Context, i int) error {
		var data []byte
		err := s.b.pol().Execute(ctx, s.key, func(ctx context.Context) (err error) {
			octx, cancel := context.WithTimeout(ctx, objectReadTimeout)
			defer cancel()
			data, err = s.obs.GetBytes(octx, keys[i].String())
			if errors.Is(err, jetstream.ErrObjectNotFound) {
				data, err = nil, nil
			}
			return s.b.classifyConn(err, "load vector")
		})
		if err != nil || data == nil {
			return err
		}
		v, derr := decodeVector(data)
		if derr != nil {
			s.b.log.Warn().Err(derr).Str("vector", keys[i].String()).Msg("store: a stored tool vector is malformed; it will be embedded again")
			return nil
		}
		out[i] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SaveVectors writes vecs[i] under keys[i].
func (s *vectorStore) SaveVectors(ctx context.Context, keys []agent.VectorKey, vecs [][]float32) error {
	if len(keys) != len(vecs) {
		return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "save vectors",
			Message: fmt.Sprintf("%d keys for %d vectors", len(keys), len(vecs))}
	}
	return s.each(ctx, len(keys), func(ctx context.Context, i int) error {
		data, err := encodeVector(vecs[i])
		if err != nil {
			return err
		}
		return s.b.pol().Execute(ctx, s.key, func(ctx context.Context) error {
			_, err := s.obs.PutBytes(ctx, keys[i].String(), data)
			return s.b.classifyConn(err, "save vector")
		})
	})
}

// each runs f for 0..n-1, at most s.conc at once, and returns the first
// error (the others are cancelled); every goroutine has ended on return.
func (s *vectorStore) each(ctx context.Context, n int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	sem := make(chan struct{}, s.conc)
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// vectorMagic starts a stored vector (format version 1).
var vectorMagic = [4]byte{'S', 'B', 'V', '1'}

// maxVectorDims bounds a stored vector's dimension.
const maxVectorDims = 1 << 16

func encodeVector(v []float32) ([]byte, error) {
	if len(v) == 0 || len(v) > maxVectorDims {
		return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "save vector",
			Message: fmt.Sprintf("a vector has %d dimensions (want 1 to %d)", len(v), maxVectorDims)}
	}
	out := make([]byte, 8+4*len(v))
	copy(out, vectorMagic[:])
	binary.LittleEndian.PutUint32(out[4:], uint32(len(v)))
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "save vector",
				Message: fmt.Sprintf("value %d of a vector is not finite", i)}
		}
		binary.LittleEndian.PutUint32(out[8+4*i:], math.Float32bits(x))
	}
	return out, nil
}

// decodeVector reads a stored vector, refusing anything else (another
// format, a dimension its length does not hold, values that are not
// finite).
func decodeVector(data []byte) ([]float32, error) {
	if len(data) < 8 || [4]byte(data[:4]) != vectorMagic {
		return nil, protocolError("load vector", errors.New("not a stored vector (bad header)"))
	}
	n := binary.LittleEndian.Uint32(data[4:])
	if n == 0 || n > maxVectorDims || len(data) != 8+4*int(n) {
		return nil, protocolError("load vector", fmt.Errorf("a vector of %d dimensions in %d bytes", n, len(data)))
	}
	v := make([]float32, n)
	for i := range v {
		x := math.Float32frombits(binary.LittleEndian.Uint32(data[8+4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, protocolError("load vector", fmt.Errorf("value %d is not finite", i))
		}
		v[i] = x
	}
	return v, nil
}
