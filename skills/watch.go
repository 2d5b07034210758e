package skills

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/switchboard-dev/switchboard/failure"
)

// watcher reloads the toolset when its OS roots change. It owns one
// goroutine, stopped by stop.
type watcher struct {
	t       *Toolset
	w       *fsnotify.Watcher
	watched map[string]bool
	// parents are the roots' parent folders (watched so that a root
	// created later is noticed) and roots the roots: in a parent, only
	// events about a root count.
	parents, roots map[string]bool
	cancel         context.CancelFunc
	done           chan struct{}
	once           sync.Once
	err            error
}

func (t *Toolset) startWatcher() (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(t.log.WithContext(context.Background())) // a policy without a Logger logs here
	w := &watcher{t: t, w: fw, watched: map[string]bool{}, parents: map[string]bool{}, roots: map[string]bool{},
		cancel: cancel, done: make(chan struct{})}
	for _, r := range t.cfg.Roots {
		if r.Path != "" {
			w.roots[r.Path] = true
			w.parents[filepath.Dir(r.Path)] = true
		}
	}
	w.sync(ctx)
	go w.loop(ctx)
	return w, nil
}

// sync watches the roots, every folder discovery visited and every skill
// folder, and forgets the ones that went away.
func (w *watcher) sync(ctx context.Context) {
	want := map[string]bool{}
	for _, r := range w.t.cfg.Roots {
		if r.Path != "" {
			want[r.Path] = true
			// The parent, so that a root created later is noticed.
			want[filepath.Dir(r.Path)] = true
		}
	}
	for _, d := range w.t.current().dirs {
		want[d] = true
	}
	for d := range w.watched {
		if !want[d] {
			_ = w.w.Remove(d)
			delete(w.watched, d)
		}
	}
	for d := range want {
		if w.watched[d] {
			continue
		}
		if err := w.w.Add(d); err != nil {
			continue // missing (a root not created yet) or out of watches
		}
		w.watched[d] = true
	}
}

func (w *watcher) loop(ctx context.Context) {
	defer close(w.done)
	var timer *time.Timer
	var fire <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if dir := filepath.Dir(ev.Name); w.parents[dir] && !w.roots[ev.Name] && !w.isVisited(dir) {
				continue // a sibling of a root (~/.claude's other files)
			}
			if timer == nil {
				timer = time.NewTimer(w.t.cfg.Debounce)
			} else {
				timer.Reset(w.t.cfg.Debounce)
			}
			fire = timer.C
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			w.t.pol().Handle(ctx, &failure.Error{Kind: failure.Internal, Source: failure.SourceSkill, Name: w.t.cfg.Name, Op: "watch",
				Message: "the skills watcher reported an error; changes may be missed", Err: err})
		case <-fire:
			fire = nil
			if _, err := w.t.Reload(ctx); err != nil && ctx.Err() == nil {
				w.t.pol().Handle(ctx, &failure.Error{Kind: failure.Internal, Source: failure.SourceSkill, Name: w.t.cfg.Name, Op: "reload", Err: err})
			}
			w.sync(ctx)
		}
	}
}

// isVisited reports whether discovery visited dir (the loop's goroutine
// only).
func (w *watcher) isVisited(dir string) bool {
	for _, d := range w.t.current().dirs {
		if d == dir {
			return true
		}
	}
	return w.roots[dir]
}

func (w *watcher) stop() error {
	w.once.Do(func() {
		w.cancel()
		<-w.done
		w.err = w.w.Close()
	})
	return w.err
}
