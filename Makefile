# Switchboard's two commands: `go run ./cmd/demo` and `make test`.
GO ?= go
NPM_DIR := internal/npm

.PHONY: test npm vet gotest bench fuzz demo

## test: install the pinned npm test peers, vet, and run every test with the race detector.
test: npm vet gotest

## npm: install the npm protocol peers pinned by internal/npm/package-lock.json.
npm:
	@if command -v npm >/dev/null 2>&1; then \
		if [ ! -d $(NPM_DIR)/node_modules ] || [ $(NPM_DIR)/package-lock.json -nt $(NPM_DIR)/node_modules/.package-lock.json ]; then \
			npm ci --prefix $(NPM_DIR) --no-audit --no-fund; \
		fi; \
	else \
		echo "npm not found: interop tests that need npm peers will be skipped"; \
	fi

vet:
	$(GO) vet ./...

gotest:
	$(GO) test -race -count=1 -timeout 12m ./...

## bench: run every benchmark once, each with its baseline in the same run.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## demo: run the offline demo.
demo:
	$(GO) run ./cmd/demo
