# Common jobs; every target works on a fresh machine with Node 20 and npm 11.
SHELL := /bin/bash
DEMO_SOURCE ?= var/demo-source
SNAPSHOTS ?= snapshots
DEMO_FUNDS ?= 2000
# The demo universe is planned to here, so `make run`'s synthetic refresh can extend it day by day.
DEMO_HORIZON ?= $(shell node -e 'console.log(new Date().getUTCFullYear() + 3 + "-12-31")')
# When `make run` refreshes the demo: weekdays 18:30 New York, NYSE trading days only.
REFRESH_CRON ?= 30 18 * * 1-5

.PHONY: system-deps setup build install install-systemd demo demo-refresh demo-key demo-person run test lint bench-build bench-http clean

# `npm ci`: exactly the lock. It needs every platform's optional binary in the lock,
# so the versions are ones whose binaries the reachable registry has for every
# platform: biome 2.5.15 (2.6.x has only the Linux ones there) and, through
# `overrides`, msgpackr-extract 3.0.4 (3.0.7's macOS, Windows and ARM builds are
# missing there). Without that, npm leaves them out and `npm ci` refuses the lock.
# --ignore-scripts: no dependency's install script runs, whichever npm this is (npm 11
# blocks them by default; npm 10, which Node 20 ships, would run them). None is needed:
# uWS, msgpackr and esbuild ship their binaries in the package.
node_modules/.package-lock.json: package-lock.json package.json
	npm ci --no-audit --no-fund --ignore-scripts

setup: node_modules/.package-lock.json build

# tsc takes some 10 s: build only when a compiled source or a tsconfig changed since
# the last build (dist/.built), so `make run` starts at once on an unchanged tree.
# The application's sources: the build is out of date when any of them changes.
TS_SOURCES := $(shell find accounts core builder server schemas cli -name '*.ts' ! -name '*.test.ts' 2>/dev/null)

dist/.built: node_modules/.package-lock.json tsconfig.json tsconfig.build.json $(TS_SOURCES)
	npm run build
	@touch $@

build: dist/.built

# A server's install (docs/operating.md, "Installing on a server"): the built app under
# PREFIX with its production dependencies, and the `fundreturns` launcher in BINDIR,
# the path deploy/systemd/'s units run. DESTDIR stages it all under another root.
PREFIX ?= /opt/fundreturns
BINDIR ?= /usr/local/bin
CONF_DIR ?= /etc/fundreturns
SYSTEMD_DIR ?= /etc/systemd/system
install: build
	PREFIX='$(PREFIX)' BINDIR='$(BINDIR)' DESTDIR='$(DESTDIR)' sh deploy/install.sh

# The serve and schedule units, naming the launcher in BINDIR and the settings in
# CONF_DIR, and the example settings (serve.env, schedule.env) where none exist yet.
install-systemd:
	install -d '$(DESTDIR)$(SYSTEMD_DIR)' '$(DESTDIR)$(CONF_DIR)'
	@for u in serve schedule; do \
	  sed -e 's|/usr/local/bin/fundreturns|$(BINDIR)/fundreturns|' -e 's|/etc/fundreturns/|$(CONF_DIR)/|' \
	    deploy/systemd/fundreturns-$$u.service > '$(DESTDIR)$(SYSTEMD_DIR)'/fundreturns-$$u.service; \
	  echo "installed $(DESTDIR)$(SYSTEMD_DIR)/fundreturns-$$u.service"; \
	  if [ -e '$(DESTDIR)$(CONF_DIR)'/$$u.env ]; then echo "kept $(DESTDIR)$(CONF_DIR)/$$u.env"; \
	  else install -m 644 deploy/systemd/$$u.env '$(DESTDIR)$(CONF_DIR)'/$$u.env; echo "installed $(DESTDIR)$(CONF_DIR)/$$u.env"; fi; \
	done

# The embedded default: a generated demo universe and its snapshot, made once.
demo: setup
	@if [ ! -s $(SNAPSHOTS)/CURRENT ]; then \
	  if [ ! -f $(DEMO_SOURCE)/funds.csv ]; then \
	    ./bin/fundreturns.js generate --out $(DEMO_SOURCE) --funds $(DEMO_FUNDS) --seed 1 --from 1990-01-01 --horizon $(DEMO_HORIZON); \
	  fi; \
	  ./bin/fundreturns.js build --source $(DEMO_SOURCE) --snapshots $(SNAPSHOTS); \
	fi

# The demo universe again, ending today: its prices end on the day they were generated,
# so /healthz says stale a few days later. Publishes into $(SNAPSHOTS) (a running
# server swaps to it).
demo-refresh: setup
	rm -rf $(DEMO_SOURCE)
	./bin/fundreturns.js generate --out $(DEMO_SOURCE) --funds $(DEMO_FUNDS) --seed 1 --from 1990-01-01 --horizon $(DEMO_HORIZON)
	./bin/fundreturns.js build --source $(DEMO_SOURCE) --snapshots $(SNAPSHOTS)

# As documented for every flag: FUNDRETURNS_PORT and FUNDRETURNS_HOST work here too.
HOST ?= $(or $(FUNDRETURNS_HOST),127.0.0.1)
PORT ?= $(or $(FUNDRETURNS_PORT),8080)
STORE ?= var/store
# Where the printed examples send requests: a wildcard listen address is reached on
# loopback, and an IPv6 address goes in brackets.
SHOWN_HOST = $(if $(filter 0.0.0.0,$(HOST)),127.0.0.1,$(if $(filter ::,$(HOST)),::1,$(HOST)))
BASE_URL_SHOWN = http://$(if $(findstring :,$(SHOWN_HOST)),[$(SHOWN_HOST)],$(SHOWN_HOST)):$(PORT)
DEMO_KEY ?= var/demo-key

# A demo account and key, made once; the key is kept in $(DEMO_KEY) (mode 600)
# because the store keeps only its hash. Made again when the kept key is no longer
# a live key of the demo account (the store was reset, the key revoked).
demo-key: setup
	@if [ -s $(DEMO_KEY) ] && ./bin/fundreturns.js keys list demo --json --store $(STORE) 2>/dev/null \
	    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let live=false;try{const key=require("fs").readFileSync(process.argv[1],"utf8").trim();live=JSON.parse(s).some(k=>k.revoked_at===null&&(k.expires_at===null||Date.parse(k.expires_at)>Date.now())&&key.startsWith(k.prefix))}catch{}process.exit(live?0:1)})' $(DEMO_KEY); then :; else \
	  ./bin/fundreturns.js accounts show demo --store $(STORE) >/dev/null 2>&1 || \
	    ./bin/fundreturns.js accounts create demo --plan business --store $(STORE) >/dev/null; \
	  umask 077; ./bin/fundreturns.js keys create demo --json --store $(STORE) \
	    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).key+"\n"))' > $(DEMO_KEY); \
	fi

# A demo person who signs in to the dashboard (/account) and owns the demo account,
# an admin so the admin view (/admin) shows too. The password is kept in
# $(DEMO_PASSWORD) (mode 600); the store keeps only its hash.
DEMO_EMAIL ?= demo@example.com
DEMO_PASSWORD ?= var/demo-password
demo-person: demo-key
	@if ./bin/fundreturns.js users show $(DEMO_EMAIL) --store $(STORE) >/dev/null 2>&1 && [ -s $(DEMO_PASSWORD) ]; then :; else \
	  umask 077; [ -s $(DEMO_PASSWORD) ] || node -e 'process.stdout.write(require("crypto").randomBytes(12).toString("base64url")+"\n")' > $(DEMO_PASSWORD); \
	  ./bin/fundreturns.js users show $(DEMO_EMAIL) --store $(STORE) >/dev/null 2>&1 || \
	    ./bin/fundreturns.js users create $(DEMO_EMAIL) --account demo --admin --password-file $(DEMO_PASSWORD) --store $(STORE) >/dev/null; \
	fi

run: demo demo-person
	./bin/fundreturns.js inspect --snapshots $(SNAPSHOTS)
	@echo
	@echo "Demo API key (account 'demo', plan business): $$(cat $(DEMO_KEY))"
	@echo "Try: curl -H \"Authorization: Bearer $$(cat $(DEMO_KEY))\" '$(BASE_URL_SHOWN)/v1/funds?limit=3'"
	@echo "     (README's examples: export BASE=$(BASE_URL_SHOWN))"
	@echo "Dashboard: $(BASE_URL_SHOWN)/account  (sign in as $(DEMO_EMAIL), password $$(cat $(DEMO_PASSWORD)); an admin: $(BASE_URL_SHOWN)/admin)"
	@echo
	@echo "The demo refreshes itself ($(REFRESH_CRON), New York time, trading days; missed days at start) from the synthetic provider."
	./bin/fundreturns.js serve --host $(HOST) --port $(PORT) --snapshots $(SNAPSHOTS) --store $(STORE) \
	  --refresh-cron '$(REFRESH_CRON)' --refresh-provider synthetic --refresh-source $(DEMO_SOURCE)

# The Redis store's tests start their own redis-server (free loopback port, no
# persistence); the second pass of the end-to-end tests runs under libfaketime; the
# deploy/ tests check the alert rules and /metrics with promtool and the nginx example
# with `nginx -t` (test/deploy.test.ts, test/metrics.test.ts: under CI=true a missing
# one fails them); the browser tests drive Debian's chromium through playwright-core,
# which never downloads a browser (test/browser.ts); `fundreturns bench`'s tests load a
# server with wrk (test/bench.test.ts). All from Debian's packages,
# installed here when missing.
SYSTEM_PACKAGES := redis-server:redis-server faketime:faketime promtool:prometheus nginx:nginx chromium:chromium wrk:wrk openssl:openssl valgrind:valgrind
system-deps:
	@missing=; for p in $(SYSTEM_PACKAGES); do command -v $${p%%:*} >/dev/null || missing="$$missing $${p#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# The whole suite, then the end-to-end tests (test/) again with the clock a year
# ahead: a date baked into a test fails the day it is written, not the day it
# expires. After each pass, test/leftovers.sh fails the run if a process it started
# (tagged FUNDRETURNS_TEST_RUN) is still running.
# A hang anywhere (a child that never exits) ends the pass after TEST_TIMEOUT seconds
# rather than CI's whole budget.
FAKETIME_AHEAD ?= +400d
TEST_TIMEOUT ?= 2400
test: system-deps node_modules/.package-lock.json
	@run=fr-test-$$$$; status=0; \
	FUNDRETURNS_TEST_RUN=$$run timeout -k 30 $(TEST_TIMEOUT) npm test || status=$$?; \
	bash test/leftovers.sh $$run || status=1; \
	if [ $$status -eq 0 ]; then \
	  echo "== end-to-end tests again, the clock moved $(FAKETIME_AHEAD) (faketime)"; \
	  FUNDRETURNS_TEST_RUN=$$run-ahead FAKETIME_DONT_FAKE_MONOTONIC=1 \
	    timeout -k 30 $(TEST_TIMEOUT) faketime -f '$(FAKETIME_AHEAD)' npx vitest run test/ || status=$$?; \
	  bash test/leftovers.sh $$run-ahead || status=1; \
	fi; \
	exit $$status

lint: node_modules/.package-lock.json
	npm run lint

bench-build: setup
	npx tsx bench/build.bench.ts

bench-http: setup
	npx tsx bench/http.bench.ts

clean:
	rm -rf dist var $(SNAPSHOTS)/*/ $(SNAPSHOTS)/CURRENT
