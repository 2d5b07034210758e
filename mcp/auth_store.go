package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/switchboard-dev/switchboard/failure"
)

// maxTokenFile bounds the token file read by the file store.
const maxTokenFile = 4 << 20

// NewFileTokenStore returns a TokenStore in one JSON file (created with
// mode 0600, its directory 0700; rewritten atomically), for a CLI or a
// desktop host. The file holds tokens in clear: keep it in the user's
// own directory. Processes sharing a file should use a bus/store Tokens store instead.
func NewFileTokenStore(path string) (TokenStore, error) {
	if path == "" {
		return nil, failure.New(failure.Config, failure.SourceMCP, "NewFileTokenStore: the path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, failure.Wrap(failure.Config, failure.SourceMCP, err)
	}
	return &fileStore{path: abs}, nil
}

type fileStore struct {
	mu   sync.Mutex
	path string
}

func (f *fileStore) read() (map[string][]byte, error) {
	file, err := os.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxTokenFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxTokenFile {
		return nil, fmt.Errorf("the token file %s is larger than %d bytes", f.path, maxTokenFile)
	}
	var doc struct {
		V      int               `json:"v"`
		Logins map[string][]byte `json:"logins"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.V != 1 {
		return nil, fmt.Errorf("the token file %s is not a version 1 token file", f.path)
	}
	if doc.Logins == nil {
		doc.Logins = map[string][]byte{}
	}
	return doc.Logins, nil
}

func (f *fileStore) write(m map[string][]byte) error {
	b, err := json.Marshal(struct {
		V      int               `json:"v"`
		Logins map[string][]byte `json:"logins"`
	}{1, m})
	if err != nil {
		return err
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tokens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.path)
}

func (f *fileStore) Load(_ context.Context, key string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.read()
	if err != nil {
		return nil, failure.Wrap(failure.Internal, failure.SourceMCP, err)
	}
	return m[key], nil
}

func (f *fileStore) Save(_ context.Context, key string, data []byte) error {
	return f.update(func(m map[string][]byte) { m[key] = data })
}

func (f *fileStore) Delete(_ context.Context, key string) error {
	return f.update(func(m map[string][]byte) { delete(m, key) })
}

func (f *fileStore) update(change func(map[string][]byte)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.read()
	if err == nil {
		change(m)
		err = f.write(m)
	}
	if err != nil {
		return failure.Wrap(failure.Internal, failure.SourceMCP, err)
	}
	return nil
}

// memStore is the default TokenStore: logins live as long as the Manager.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memStore) Load(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

func (s *memStore) Save(_ context.Context, key string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = data
	return nil
}

func (s *memStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}
