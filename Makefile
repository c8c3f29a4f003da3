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
# Where the programs (and tether-manual, which writes their manual pages) are. Empty:
# `make install` builds them first (release: static, see RELEASE_FLAGS). Set it to install
# programs built earlier without building
# (`make release && sudo make install PRODUCTS_DIR=$(swift build -c release --show-bin-path)`).
PRODUCTS_DIR ?=
PROGRAMS = tetherd tetherctl tether-server
MANDIR = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d

# Release builds link the Swift standard library and Foundation statically: the programs need
# no Swift toolchain on the machines they run on (only libc, libstdc++, libsystemd, libsqlite3,
# zlib). They are linked by lld with packed relative relocations (DT_RELR, glibc 2.36): a
# static Swift program has ~120,000 of them, 2.9 MB of table the loader reads at every start and
# that stays mapped, against 45 KB packed (BENCHMARKS.md, "Idle memory").
RELEASE_FLAGS = -c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
BUILD_FLAGS = $(if $(filter release,$(CONFIGURATION)),$(RELEASE_FLAGS),-c $(CONFIGURATION))
# The release number's one source (TetherVersionTests checks that the programs, the Python
# package, CHANGELOG.md and README.md say the same).
VERSION := $(shell cat VERSION)
# Manual pages are dated with the release's date in CHANGELOG.md (reproducible builds).
RELEASE_DATE := $(shell sed -n 's/^## \[$(VERSION)\] - \([0-9-]*\).*/\1/p' CHANGELOG.md)
# Each program's manual section, EXIT STATUS, FILES and SEE ALSO (the rest comes from its
# argument definitions, through tether-manual).
MAN_tetherd = 8 --exit 0=success --exit "1=runtime error" --exit "2=usage or configuration error (--check-config: invalid)" \
    --file "/etc/tether/tetherd.toml=configuration" \
    --file "/etc/tether/token=this device's token (owner tether, mode 0600; [server] token_file). tetherd.service is not started until it, /var/lib/tether/token or /etc/tether/enroll.key exists and is not empty (ConditionFileNotEmpty=|): a start before, at boot or at a package installation, is skipped, not failed; write it, then systemctl start tetherd" \
    --file "/etc/tether/enroll.key=an enrollment key (owner tether, mode 0600; [server] enrollment_key_file): with it tetherd enrolls itself at start while it has no credential, and writes the one it receives to token_file (/var/lib/tether/token: /etc is read-only to the service)" \
    --file "/run/tether/tetherd.sock=control socket" \
    --file "/var/lib/tether=state database, stores, backups" \
    --see-also "tetherctl(1)" --see-also "tetherd.toml(5)" --see-also "tether-hooks(7)" --see-also "tether-server(8)" --see-also "systemd.service(5)"
MAN_tetherctl = 1 --exit 0=success --exit "1=runtime error or timeout (enroll: the server refused)" --exit "2=usage error" --exit "3=the daemon cannot be reached" --exit "4=permission denied (a user the daemon refuses, or a reader sending a command that changes the agent)" --exit "5=enroll: the server cannot enroll now (unreachable, rate-limited, unavailable); the same command may succeed later" \
    --see-also "tetherd(8)" --see-also "tetherd.toml(5)"
MAN_tether-server = 8 --exit 0=success --exit "1=runtime error (also: the server refused an admin command)" --exit "2=usage or configuration error" \
    --file "/etc/tether/tether-server.toml=configuration" --file "/etc/tether/schema.toml=the tables of every partition" \
    --file "/var/lib/tether-server=data directory" \
    --see-also "tether-server.toml(5)" --see-also "tetherd(8)"
HANDWRITTEN_MAN = man/tetherd.toml.5 man/tether-server.toml.5 man/tether-hooks.7

.PHONY: all build release programs package-programs package-programs-beside package-programs-unchecked test test-phases test-packages soak flood demo bench bootstrap clean install uninstall deb

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(SWIFT) build $(RELEASE_FLAGS)

# What the packages and `make install` hold: the three programs, and tether-manual, which writes
# their manual pages. Built one `--product` at a time they leave out the benchmark, the example
# app and the test helpers, which a whole `swift build` compiles and links too (BENCHMARKS.md,
# "make test from a clean clone").
PACKAGED_PRODUCTS = $(PROGRAMS) tether-manual
# $(call build-products,FLAGS): the four, one `swift build FLAGS --product` each.
build-products = @for p in $(PACKAGED_PRODUCTS); do echo "$(SWIFT) build $(1) --product $$p"; $(SWIFT) build $(1) --product $$p || exit 1; done
programs: bootstrap
	$(call build-products,$(BUILD_FLAGS))

# The whole suite: unit, integration (real processes on loopback) and journald tests.
# Seven phases keep a 2-core machine responsive: unit tests in parallel (the storage conformance
# suite starts one PostgreSQL of its own), then the server's integration tests, then the
# multi-instance PostgreSQL tests (real servers sharing a PostgreSQL the tests start; alone, so
# their instances and PostgreSQL do not starve the other integration tests), then the floods
# against one server (alone for the same reason), then the end-to-end tests (real
# servers and agents), then the fault campaign, then the packages (`make test-packages`, below).
INTEGRATION = TetherServerIntegrationTests
POSTGRES = PostgresServerTests|PostgresRestartTests|TetherServerIntegrationTests\.EnrollmentTests|TetherEndToEndTests\.EnrollmentFleetEndToEndTests
# Hostile connections against one server, alone, so their load does not starve the other
# integration tests' servers: 1,000 at once ([limits]) and one host's flood of unfinished heads.
FLOOD = ConnectionFloodTests
# Issue 46's targets (2,000 slow or oversized unauthenticated requests from 20 source addresses
# on every route while 200 devices sync and an operator uses the admin API): `make flood`,
# against the release build (RELEASE_FLAGS, as shipped: its memory and speed are what the
# targets are about) through TETHER_SERVER_BIN. A measurement of targets, like `make bench`, so
# not in `make test` (which keeps ConnectionFloodTests and the campaign's flood fault); figures in
# docs/reliability.md, Security.
HOSTILE_FLOOD = HostileFloodTests
END_TO_END = TetherEndToEndTests
# The fault campaign (about two minutes, seeded: 70 % with the server on SQLite, 30 % with two
# instances on PostgreSQL; one summary line each in the output) runs alone last.
CAMPAIGN = FaultCampaignTests
# The packages (static programs, Debian 12 root, lintian) run last: `make test-packages`.
# `make test PACKAGES=0` leaves them out of a local run (CI runs them).
PACKAGING = TetherPackagingTests
PACKAGES ?= 1
# Foundation's Process.run() in Swift 6.3.1 reads up to 256 bytes past a readdir(3) record of
# /proc/self/fd and crashes the test process when the next page is unmapped (about one run in
# five of a suite that starts many processes; fixed upstream by swift-corelibs-foundation
# pull request 5472, not yet in a release). With allocations of 16 KiB and more made by mmap,
# readdir's 32 KiB buffer gets its own mapping with about 4 KiB of slack after it, so the
# over-read stays in mapped memory. Only the test processes (and what they start) run so.
TEST_ENV = GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384
# The static programs for the packages are built beside the test phases (`nice -n 19`: they
# take the CPU the tests leave idle), their output in $(PACKAGING_LOG), shown if they fail.
PACKAGING_LOG = .build/packaging.log
test: bootstrap
	$(SWIFT) build --build-tests
	@scripts/python-venv
	@$(if $(filter 0,$(PACKAGES)),true,echo "test: the packages' static programs build beside the tests (log: $(PACKAGING_LOG))")
	@$(MAKE) --no-print-directory -j2 test-phases $(if $(filter 0,$(PACKAGES)),,package-programs-beside)
	$(if $(filter 0,$(PACKAGES)),@echo "test: packages skipped (PACKAGES=0)",$(MAKE) test-packages PACKAGE_BUILD=debug TESTS_BUILT=1 PROGRAMS_BUILT=1)

test-phases:
	$(TEST_ENV) $(SWIFT) test --skip-build --skip '$(INTEGRATION)|$(END_TO_END)|$(PACKAGING)'
	$(TEST_ENV) $(SWIFT) test --skip-build --filter '$(INTEGRATION)' --skip '$(POSTGRES)|$(FLOOD)|$(HOSTILE_FLOOD)'
	$(TEST_ENV) $(SWIFT) test --skip-build --filter '$(POSTGRES)'
	$(TEST_ENV) $(SWIFT) test --skip-build --filter '$(FLOOD)'
	$(TEST_ENV) $(SWIFT) test --skip-build --filter '$(END_TO_END)' --skip '$(CAMPAIGN)|$(POSTGRES)'
	$(TEST_ENV) $(SWIFT) test --skip-build --filter '$(CAMPAIGN)'

# The Debian root the packages' tests install into is made first (mostly a download; when it
# fails, the tests try again and say why).
package-programs-beside:
	@nice -n 19 scripts/debian-root > $(PACKAGING_LOG) 2>&1 || echo "test: scripts/debian-root failed (log: $(PACKAGING_LOG)); the packages' tests try again"
	@nice -n 19 $(MAKE) --no-print-directory package-programs-unchecked PACKAGE_BUILD=debug >> $(PACKAGING_LOG) 2>&1 \
	    || { cat $(PACKAGING_LOG); echo "test: the packages' static programs did not build"; exit 1; }
	@echo "test: the packages' static programs are built"

# package-programs without scripts/bootstrap (already run by `make test`).
package-programs-unchecked:
	$(call build-products,$(PACKAGE_FLAGS))

# The randomised fault campaign for longer than `make test` runs it (about two minutes):
# `make soak DURATION=3600` (seconds); `SEED=N` replays the choices of an earlier run;
# `STORAGE=sqlite` or `STORAGE=postgresql` gives one storage the whole duration (default: both);
# `FAULTS=flood` (comma-separated) keeps those faults in effect in every round beside the random
# ones (TETHER_CAMPAIGN_FAULTS), e.g. a soak of the agents and servers under a flood.
# Every server's and agent's log is kept (a few MB) under .build/soak-logs/<UTC time>/, or in
# TETHER_TEST_CHILD_LOGS when set, so that a finding can be read back after the run.
DURATION ?= 1800
SEED ?=
STORAGE ?=
FAULTS ?=
soak: bootstrap
	$(SWIFT) build --build-tests
	@logs="$${TETHER_TEST_CHILD_LOGS:-$(CURDIR)/.build/soak-logs/$$(date -u +%Y%m%dT%H%M%SZ)}"; \
	echo "soak: the servers' and agents' logs go to $$logs"; \
	$(TEST_ENV) TETHER_TEST_CHILD_LOGS="$$logs" TETHER_CAMPAIGN_DURATION=$(DURATION) $(if $(SEED),TETHER_CAMPAIGN_SEED=$(SEED)) \
	    $(if $(STORAGE),TETHER_CAMPAIGN_STORAGE=$(STORAGE)) $(if $(FAULTS),TETHER_CAMPAIGN_FAULTS=$(FAULTS)) \
	    $(SWIFT) test --skip-build --filter '$(CAMPAIGN)'

# Issue 46's flood targets against the release build (about two minutes once built): every
# device stays bound and syncs, every admin request answers within 2 s, the server stays under
# 128 MB. Prints one line per figure.
flood: bootstrap
	$(SWIFT) build --build-tests
	$(SWIFT) build $(RELEASE_FLAGS) --product tether-server
	TETHER_SERVER_BIN="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/tether-server" \
	    $(TEST_ENV) $(SWIFT) test --skip-build --filter '$(HOSTILE_FLOOD)'

demo: bootstrap
	$(SWIFT) build
	@scripts/demo

# Performance figures (BENCHMARKS.md): a real server and agents on loopback, each figure with a
# floor measured in the same run. Prints a table and writes bench/results.json, keeps the run
# with its commit and date in bench/history/ (in git) and prints each figure's change against
# the last earlier run of it in the same mode; never fails on
# a figure (not part of `make test`). About 9 minutes; `make bench QUICK=1` is a small version
# (10k rows, one run each) in about 35 s once built.
QUICK ?=
bench: bootstrap
	@scripts/bench-venv
	$(SWIFT) build $(RELEASE_FLAGS)
	$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/tether-bench $(if $(filter-out 0,$(QUICK)),--quick) --results bench/results.json \
	    --history bench/history --commit "$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$$(git diff --quiet HEAD 2>/dev/null || echo -dirty)"

# Installs binaries, units, sysusers, tmpfiles, catalog, example configuration and hooks,
# and docs. Honours DESTDIR and PREFIX; never overwrites an existing configuration file.
install: $(if $(PRODUCTS_DIR),,bootstrap)
ifeq ($(PRODUCTS_DIR),)
	$(call build-products,$(BUILD_FLAGS))
endif
	@bin=$(if $(PRODUCTS_DIR),'$(PRODUCTS_DIR)',$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path)) && \
	install -d -m 0755 $(DESTDIR)$(BINDIR) && \
	for p in $(PROGRAMS); do install -m 0755 "$$bin/$$p" $(DESTDIR)$(BINDIR)/$$p; done && \
	install -d -m 0755 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 && \
	$(foreach p,$(PROGRAMS),"$$bin/$(p)" --experimental-dump-help | "$$bin/tether-manual" --date "$(RELEASE_DATE)" \
	    --source "Tether $(VERSION)" --section $(MAN_$(p)) > $(DESTDIR)$(MANDIR)/man$(firstword $(MAN_$(p)))/$(p).$(firstword $(MAN_$(p))) &&) \
	for page in $(HANDWRITTEN_MAN); do \
	    section=$${page##*.}; sed -e 's#/usr/local/share/#$(PREFIX)/share/#g' "$$page" > $(DESTDIR)$(MANDIR)/man$$section/$$(basename $$page); \
	done && \
	chmod 0644 $(DESTDIR)$(MANDIR)/man?/*tether* && \
	install -d -m 0755 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) && \
	for p in $(PROGRAMS); do \
	    "$$bin/$$p" --generate-completion-script bash | sed '1{/^#!/d}' > $(DESTDIR)$(BASHCOMPDIR)/$$p && \
	    "$$bin/$$p" --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_$$p && \
	    "$$bin/$$p" --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/$$p.fish && \
	    chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/$$p $(DESTDIR)$(ZSHCOMPDIR)/_$$p $(DESTDIR)$(FISHCOMPDIR)/$$p.fish || exit 1; \
	done
	install -d -m 0755 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(CATALOGDIR)
	for u in tetherd tether-server; do \
	    sed -e 's#/usr/local/bin/#$(BINDIR)/#g' -e 's#/usr/local/share/doc/tether/#$(DOCDIR)/#g' \
	        -e 's#/etc/tether/#$(SYSCONFDIR)/#g' systemd/$$u.service > $(DESTDIR)$(UNITDIR)/$$u.service; \
	    chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.service; \
	done
	install -m 0644 systemd/sysusers.d/tetherd.conf systemd/sysusers.d/tether-server.conf $(DESTDIR)$(SYSUSERSDIR)/
	install -m 0644 systemd/tmpfiles.d/tetherd.conf systemd/tmpfiles.d/tether-server.conf $(DESTDIR)$(TMPFILESDIR)/
	sed -e 's#/usr/local/share/doc/tether/#$(DOCDIR)/#g' systemd/catalog/tether.catalog > $(DESTDIR)$(CATALOGDIR)/tether.catalog
	install -d -m 0755 $(DESTDIR)$(SHAREDIR)/hooks $(DESTDIR)$(SHAREDIR)/examples $(DESTDIR)$(DOCDIR)
	install -m 0755 hooks/* $(DESTDIR)$(SHAREDIR)/hooks/
	install -m 0644 etc/*.toml $(DESTDIR)$(SHAREDIR)/examples/
	install -d -m 0755 $(DESTDIR)$(SHAREDIR)/contrib
	install -m 0644 contrib/* $(DESTDIR)$(SHAREDIR)/contrib/
	install -m 0644 README.md BENCHMARKS.md CHANGELOG.md docs/*.md $(DESTDIR)$(DOCDIR)/
	install -d -m 0751 $(DESTDIR)$(SYSCONFDIR)
	for f in etc/*.toml; do \
	    target=$(DESTDIR)$(SYSCONFDIR)/$$(basename $$f); \
	    if [ -e "$$target" ]; then echo "keeping existing $$target"; else install -m 0640 $$f "$$target"; fi; \
	done
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
	    systemd-sysusers tetherd.conf tether-server.conf; systemd-tmpfiles --create tetherd.conf tether-server.conf; \
	    journalctl --update-catalog; systemctl daemon-reload; \
	fi

# Removes what `make install` installed, except configuration and data (/etc/tether, /var/lib/tether*).
uninstall:
	rm -f $(foreach p,$(PROGRAMS),$(DESTDIR)$(BINDIR)/$(p))
	rm -f $(DESTDIR)$(UNITDIR)/tetherd.service $(DESTDIR)$(UNITDIR)/tether-server.service
	rm -f $(DESTDIR)$(SYSUSERSDIR)/tetherd.conf $(DESTDIR)$(SYSUSERSDIR)/tether-server.conf
	rm -f $(DESTDIR)$(TMPFILESDIR)/tetherd.conf $(DESTDIR)$(TMPFILESDIR)/tether-server.conf $(DESTDIR)$(CATALOGDIR)/tether.catalog
	rm -f $(foreach p,$(PROGRAMS),$(DESTDIR)$(MANDIR)/man1/$(p).1 $(DESTDIR)$(MANDIR)/man8/$(p).8 \
	    $(DESTDIR)$(BASHCOMPDIR)/$(p) $(DESTDIR)$(ZSHCOMPDIR)/_$(p) $(DESTDIR)$(FISHCOMPDIR)/$(p).fish)
	rm -f $(foreach m,$(HANDWRITTEN_MAN),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	rm -rf $(DESTDIR)$(SHAREDIR) $(DESTDIR)$(DOCDIR)
	@if [ -z "$(DESTDIR)" ] && command -v journalctl >/dev/null; then journalctl --update-catalog; fi
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
	@echo "configuration in $(DESTDIR)$(SYSCONFDIR) and data in /var/lib/tether* were kept"

# The static programs the packages hold. PACKAGE_BUILD=release (the default: `make deb`, `make
# test-packages`): the release build, as shipped. PACKAGE_BUILD=debug (what `make test` uses):
# the tests' configuration linked statically, in a build directory of its own
# (.build/packaging: the static standard library is another module path, so sharing .build
# would rebuild every module each way), built beside the test phases at the lowest CPU
# priority. A cold static release build costs about 18 CPU-minutes and a static debug build
# about 10; on 2 cores the release one cannot end with the tests and keep `make test` under 20
# minutes (BENCHMARKS.md, "make test in one build's time").
PACKAGE_BUILD ?= release
STATIC_DEBUG_FLAGS = --scratch-path .build/packaging --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
PACKAGE_FLAGS = $(if $(filter debug,$(PACKAGE_BUILD)),$(STATIC_DEBUG_FLAGS),$(RELEASE_FLAGS))
package-programs: bootstrap
	$(call build-products,$(PACKAGE_FLAGS))

# Debian packages of the static programs (PACKAGE_BUILD): tether-agent_$(VERSION)_<arch>.deb
# and tether-server_$(VERSION)_<arch>.deb in $(DEB_DIR) (scripts/build-deb, packaging/).
DEB_DIR ?= .build/deb
deb: $(if $(PROGRAMS_BUILT),,package-programs)
	scripts/build-deb --products "$$($(SWIFT) build $(PACKAGE_FLAGS) --show-bin-path)" --out $(DEB_DIR) --version $(VERSION)

# The packages and the static programs, tested: each program runs with the Swift toolchain
# hidden; install, upgrade and purge with dpkg in a Debian 12 root; lintian without errors.
# TESTS_BUILT=1 and PROGRAMS_BUILT=1 (from `make test`): the test bundle and the static
# programs are already built.
test-packages: deb
	$(if $(TESTS_BUILT),,$(SWIFT) build --build-tests)
	TETHER_DEB_DIR=$(CURDIR)/$(DEB_DIR) TETHER_PROGRAMS_BIN="$$($(SWIFT) build $(PACKAGE_FLAGS) --show-bin-path)" \
	    $(TEST_ENV) $(SWIFT) test --skip-build --filter '$(PACKAGING)'

clean:
	rm -rf .build demo-run
