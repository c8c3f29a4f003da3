# Tether — build, test, demo and benchmark (`make bench`, `make bench QUICK=1`) on Debian 12.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=

BINDIR = $(PREFIX)/bin
SHAREDIR = $(PREFIX)/share/tether
DOCDIR = $(PREFIX)/share/doc/tether
UNITDIR ?= /usr/lib/systemd/system
SYSUSERSDIR ?= /usr/lib/sysusers.d
TMPFILESDIR ?= /usr/lib/tmpfiles.d
CATALOGDIR ?= /usr/lib/systemd/catalog
SYSCONFDIR ?= /etc/tether
# `make install CONFIGURATION=debug` installs a debug build (the install test uses it).
CONFIGURATION ?= release
# Where the programs to install are. Empty: `make install` builds them first with
# `swift build -c $(CONFIGURATION)`. Set it to install programs built earlier without building
# (`make release && sudo make install PRODUCTS_DIR=$(swift build -c release --show-bin-path)`).
PRODUCTS_DIR ?=
PROGRAMS = tetherd tetherctl tether-server

.PHONY: all build release test soak demo bench bootstrap clean install uninstall

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(SWIFT) build -c release

# The whole suite: unit, integration (real processes on loopback) and journald tests.
# Five phases keep a 2-core machine responsive: unit tests in parallel (the storage conformance
# suite starts one PostgreSQL of its own), then the server's integration tests, then the
# multi-instance PostgreSQL tests (real servers sharing a PostgreSQL the tests start; alone, so
# their instances and PostgreSQL do not starve the other integration tests), then the
# end-to-end tests (real servers and agents), then the fault campaign.
INTEGRATION = TetherServerIntegrationTests
POSTGRES = PostgresServerTests|PostgresRestartTests
END_TO_END = TetherEndToEndTests
# The fault campaign (about two minutes, seeded; its summary line is in the output) runs alone last.
CAMPAIGN = FaultCampaignTests
test: bootstrap
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip '$(INTEGRATION)|$(END_TO_END)'
	$(SWIFT) test --skip-build --filter '$(INTEGRATION)' --skip '$(POSTGRES)'
	$(SWIFT) test --skip-build --filter '$(POSTGRES)'
	$(SWIFT) test --skip-build --filter '$(END_TO_END)' --skip '$(CAMPAIGN)'
	$(SWIFT) test --skip-build --filter '$(CAMPAIGN)'

# The randomised fault campaign for longer than `make test` runs it (about two minutes):
# `make soak DURATION=3600` (seconds); `SEED=N` replays the choices of an earlier run.
DURATION ?= 1800
SEED ?=
soak: bootstrap
	$(SWIFT) build --build-tests
	TETHER_CAMPAIGN_DURATION=$(DURATION) $(if $(SEED),TETHER_CAMPAIGN_SEED=$(SEED)) \
	    $(SWIFT) test --skip-build --filter '$(CAMPAIGN)' 

demo: bootstrap
	$(SWIFT) build
	@scripts/demo

# Performance figures (BENCHMARKS.md): a real server and agents on loopback, each figure with a
# floor measured in the same run. Prints a table and writes bench/results.json; never fails on
# a figure (not part of `make test`). About 9 minutes; `make bench QUICK=1` is a small version
# (10k rows, one run each) in about 35 s once built.
QUICK ?=
bench: bootstrap
	$(SWIFT) build -c release
	$$($(SWIFT) build -c release --show-bin-path)/tether-bench $(if $(filter-out 0,$(QUICK)),--quick) --results bench/results.json

# Installs binaries, units, sysusers, tmpfiles, catalog, example configuration and hooks,
# and docs. Honours DESTDIR and PREFIX; never overwrites an existing configuration file.
install: $(if $(PRODUCTS_DIR),,bootstrap)
ifeq ($(PRODUCTS_DIR),)
	$(SWIFT) build -c $(CONFIGURATION) $(foreach p,$(PROGRAMS),--product $(p))
endif
	@bin=$(if $(PRODUCTS_DIR),'$(PRODUCTS_DIR)',$$($(SWIFT) build -c $(CONFIGURATION) --show-bin-path)) && \
	install -d -m 0755 $(DESTDIR)$(BINDIR) && \
	for p in $(PROGRAMS); do install -m 0755 "$$bin/$$p" $(DESTDIR)$(BINDIR)/$$p; done
	install -d -m 0755 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(CATALOGDIR)
	for u in tetherd tether-server; do \
	    sed -e 's#/usr/local/bin/#$(BINDIR)/#g' -e 's#/usr/local/share/doc/tether/#$(DOCDIR)/#g' \
	        -e 's#/etc/tether/#$(SYSCONFDIR)/#g' systemd/$$u.service > $(DESTDIR)$(UNITDIR)/$$u.service; \
	    chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.service; \
	done
	install -m 0644 systemd/sysusers.d/tether.conf $(DESTDIR)$(SYSUSERSDIR)/tether.conf
	install -m 0644 systemd/tmpfiles.d/tether.conf $(DESTDIR)$(TMPFILESDIR)/tether.conf
	sed -e 's#/usr/local/share/doc/tether/#$(DOCDIR)/#g' systemd/catalog/tether.catalog > $(DESTDIR)$(CATALOGDIR)/tether.catalog
	install -d -m 0755 $(DESTDIR)$(SHAREDIR)/hooks $(DESTDIR)$(SHAREDIR)/examples $(DESTDIR)$(DOCDIR)
	install -m 0755 hooks/* $(DESTDIR)$(SHAREDIR)/hooks/
	install -m 0644 etc/*.toml $(DESTDIR)$(SHAREDIR)/examples/
	install -m 0644 README.md BENCHMARKS.md docs/*.md $(DESTDIR)$(DOCDIR)/
	install -d -m 0751 $(DESTDIR)$(SYSCONFDIR)
	for f in etc/*.toml; do \
	    target=$(DESTDIR)$(SYSCONFDIR)/$$(basename $$f); \
	    if [ -e "$$target" ]; then echo "keeping existing $$target"; else install -m 0640 $$f "$$target"; fi; \
	done
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
	    systemd-sysusers tether.conf; systemd-tmpfiles --create tether.conf; journalctl --update-catalog; systemctl daemon-reload; \
	fi

# Removes what `make install` installed, except configuration and data (/etc/tether, /var/lib/tether*).
uninstall:
	rm -f $(foreach p,$(PROGRAMS),$(DESTDIR)$(BINDIR)/$(p))
	rm -f $(DESTDIR)$(UNITDIR)/tetherd.service $(DESTDIR)$(UNITDIR)/tether-server.service
	rm -f $(DESTDIR)$(SYSUSERSDIR)/tether.conf $(DESTDIR)$(TMPFILESDIR)/tether.conf $(DESTDIR)$(CATALOGDIR)/tether.catalog
	rm -rf $(DESTDIR)$(SHAREDIR) $(DESTDIR)$(DOCDIR)
	@if [ -z "$(DESTDIR)" ] && command -v journalctl >/dev/null; then journalctl --update-catalog; fi
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
	@echo "configuration in $(DESTDIR)$(SYSCONFDIR) and data in /var/lib/tether* were kept"

clean:
	rm -rf .build demo-run
