# Switchboard's two commands: `go run ./cmd/demo` and `make test`.
GO ?= go
NPM_DIR := internal/npm

.PHONY: test npm chromium vet gotest bench fuzz demo

## test: install the pinned npm test peers and Chromium, vet, and run every test with the race detector.
test: npm chromium vet gotest

## npm: install the npm protocol peers pinned by internal/npm/package-lock.json.
npm:
	@if command -v npm >/dev/null 2>&1; then \
		if [ ! -d $(NPM_DIR)/node_modules ] || [ $(NPM_DIR)/package-lock.json -nt $(NPM_DIR)/node_modules/.package-lock.json ]; then \
			npm ci --prefix $(NPM_DIR) --no-audit --no-fund; \
		fi; \
	else \
		echo "npm not found: interop tests that need npm peers will be skipped"; \
	fi

## chromium: install Debian's chromium (the console's browser tests drive it) when it is missing
## and apt-get is there; without it those tests are skipped, saying so.
chromium:
	@if [ ! -x /usr/bin/chromium ] && ! command -v chromium >/dev/null 2>&1; then \
		if command -v apt-get >/dev/null 2>&1; then \
			SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
			$$SUDO apt-get install -y chromium || { $$SUDO apt-get update && $$SUDO apt-get install -y chromium; } || \
				echo "chromium could not be installed: the console's browser tests will be skipped"; \
		else \
			echo "chromium not found and no apt-get: the console's browser tests will be skipped"; \
		fi; \
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
