# Common jobs; every target works on a fresh machine with Node 20 and npm 11.
SHELL := /bin/bash
DEMO_SOURCE ?= var/demo-source
SNAPSHOTS ?= snapshots
DEMO_FUNDS ?= 2000

.PHONY: setup build demo run test lint bench-build bench-http clean

node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund

setup: node_modules/.package-lock.json build

build: node_modules/.package-lock.json
	npm run build

# The embedded default: a generated demo universe and its snapshot, made once.
demo: setup
	@if [ ! -s $(SNAPSHOTS)/CURRENT ]; then \
	  if [ ! -f $(DEMO_SOURCE)/funds.csv ]; then \
	    ./bin/fundreturns.js generate --out $(DEMO_SOURCE) --funds $(DEMO_FUNDS) --seed 1 --from 1990-01-01; \
	  fi; \
	  ./bin/fundreturns.js build --source $(DEMO_SOURCE) --snapshots $(SNAPSHOTS); \
	fi

HOST ?= 127.0.0.1
PORT ?= 8080

run: demo
	./bin/fundreturns.js inspect --snapshots $(SNAPSHOTS)
	./bin/fundreturns.js serve --host $(HOST) --port $(PORT) --snapshots $(SNAPSHOTS)

test: node_modules/.package-lock.json
	npm test

lint: node_modules/.package-lock.json
	npm run lint

bench-build: setup
	npx tsx bench/build.bench.ts

bench-http: setup
	npx tsx bench/http.bench.ts

clean:
	rm -rf dist var $(SNAPSHOTS)/*/ $(SNAPSHOTS)/CURRENT
