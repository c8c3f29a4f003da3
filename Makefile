# Tether — build, test and demo on Debian 12.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all build release test demo bootstrap clean

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(SWIFT) build -c release

# The whole suite: unit, integration (real processes on loopback) and journald tests.
test: bootstrap
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: bootstrap
	$(SWIFT) build
	@scripts/demo

clean:
	rm -rf .build demo-run
