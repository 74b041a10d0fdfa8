# Builds the C libraries, installs them with the header and pkg-config files, runs the C tests.
#
#   make                 build/lib/libcdmigrate.a and build/lib/libcdmigrate.so.$(VERSION), with the
#                        symlinks libcdmigrate.so.$(MAJOR) (the SONAME) and libcdmigrate.so
#   make install PREFIX=/usr/local
#   make test-c          the version and ABI checks, then the C tests against a temporary install,
#                        static and shared, under ASan+LSan, then the C examples (make examples-c)
#   make check-version   VERSION agrees with every generated place (scripts/version.py --check)
#   make check-abi       the shared library's SONAME, symbol versions and exports (scripts/check-abi.sh)
#
# The version is written once, in VERSION; scripts/version.py generates it into the header, the
# Swift sources and the Python package (those are committed, so SwiftPM and pip need no step).
#   make examples-c      the five reference migrations in C (examples/c), each checking its result
#
# libcdmigrate.a is SwiftPM's static product (engine + C API). libcdmigrate.so is linked from the
# command line's product (engine + C API + the commands, for cdm_command_line_run) with the
# toolchain's static Swift runtime, so hosts need no Swift toolchain at run time.

SWIFT        ?= swift
CC           ?= cc
PREFIX       ?= /usr/local
# The toolchain's usr directory (where bin/swift lives).
SWIFT_ROOT   ?= $(patsubst %/bin/,%,$(dir $(shell command -v $(SWIFT) 2>/dev/null)))
SWIFT_ROOT   := $(if $(SWIFT_ROOT),$(SWIFT_ROOT),/opt/swift/usr)
SWIFT_SHARED := $(SWIFT_ROOT)/lib/swift/linux
SWIFT_STATIC := $(SWIFT_ROOT)/lib/swift_static/linux
ARCH         := $(shell uname -m)
VERSION      := $(shell cat VERSION)
MAJOR        := $(firstword $(subst ., ,$(VERSION)))
SONAME       := libcdmigrate.so.$(MAJOR)

# The Swift libraries the engine uses (its autolink entries): the core, the Glibc overlay,
# Synchronization (atomics) and _StringProcessing with RegexParser, which the compiler links into
# every Swift module (its implicit `_StringProcessing` import; MATCHES runs on cdmigrate's own automaton).
SWIFT_LIBS   := -lswift_StringProcessing -lswift_RegexParser -lswiftSynchronization -lswiftGlibc -lswiftCore
SYSTEM_LIBS  := -lsqlite3 -ljansson -lxml2 -lz -lstdc++ -lm -lpthread -ldl
# What the command line (cdm_command_line_run, in the shared library only) adds: FoundationEssentials
# (no ICU), which swift-argument-parser and the commands use, with its dependencies, linked statically too.
COMMAND_LINE_LIBS := -lFoundationEssentials -l_FoundationCollections -l_FoundationCShims \
                     -lswiftDispatch -ldispatch -lBlocksRuntime -lswift_Concurrency

BUILD        := build
LIBA         := $(BUILD)/lib/libcdmigrate.a
# SwiftPM's static product of the command line: the engine, the C API, the commands and
# swift-argument-parser; libcdmigrate.so is linked from it (not installed).
LIBCLI       := $(BUILD)/lib/libcdmigrate-command-line.a
LIBSO        := $(BUILD)/lib/libcdmigrate.so
LIBSO_REAL   := $(BUILD)/lib/libcdmigrate.so.$(VERSION)
SOURCES      := $(shell find Sources -name '*.swift' -o -name '*.h' -o -name '*.modulemap') Package.swift

.PHONY: all lib install uninstall test-c examples-c test-prefix clean-c check-version check-abi
all: lib
lib: $(LIBA) $(LIBSO)

# Release only: no run-time exclusivity checks (swift_beginAccess was about a tenth of a policy
# migration's instructions). SwiftPM refuses unsafe flags in a package others depend on, so the
# flag is given here, for the library this Makefile builds, not in Package.swift.
RELEASE_FLAGS ?= -Xswiftc -enforce-exclusivity=unchecked

$(LIBA): $(SOURCES) Makefile
	$(SWIFT) build -c release --product CDMigrate $(RELEASE_FLAGS)
	mkdir -p $(BUILD)/lib
	cp "$$($(SWIFT) build -c release --show-bin-path)/libCDMigrate.a" $@

$(LIBCLI): $(SOURCES) Makefile
	$(SWIFT) build -c release --product CDMigrateCommandLine $(RELEASE_FLAGS)
	mkdir -p $(BUILD)/lib
	cp "$$($(SWIFT) build -c release --show-bin-path)/libCDMigrateCommandLine.a" $@

# swiftrt.o registers the library's Swift metadata with the runtime (as swiftc -static-stdlib does);
# the version script keeps every symbol but cdm_* private (the runtime's included) and gives the
# cdm_* ones the version node CDMIGRATE_$(MAJOR). The file is named after the full version; its
# SONAME (what programs record) after the major one; libcdmigrate.so is the link-time name.
$(LIBSO_REAL): $(LIBCLI) scripts/cdmigrate.map VERSION
	$(CC) -shared -o $@ -Wl,-soname,$(SONAME) \
	    $(SWIFT_STATIC)/$(ARCH)/swiftrt.o \
	    -Wl,--whole-archive $(LIBCLI) -Wl,--no-whole-archive \
	    -L$(SWIFT_STATIC) -Wl,--start-group $(COMMAND_LINE_LIBS) $(SWIFT_LIBS) -Wl,--end-group $(SYSTEM_LIBS) \
	    -Wl,--version-script=scripts/cdmigrate.map -Wl,-z,defs
	@if ldd $@ | grep -q 'libswift'; then echo "error: $@ depends on a shared Swift library" >&2; ldd $@; exit 1; fi

$(LIBSO): $(LIBSO_REAL)
	ln -sf libcdmigrate.so.$(VERSION) $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME) $@

check-version:
	python3 scripts/version.py --check

check-abi: $(LIBSO)
	scripts/check-abi.sh $(LIBSO_REAL) $(SONAME) CDMIGRATE_$(MAJOR) include/cdmigrate.h include/cdmigrate_internal.h

# cdmigrate.pc: the shared library (Libs), and what linking the archive needs (Libs.private, --static).
# cdmigrate-static.pc: the archive by path, for hosts that have both installed and want the static one.
$(BUILD)/cdmigrate.pc $(BUILD)/cdmigrate-static.pc: scripts/cdmigrate.pc.in scripts/cdmigrate-static.pc.in VERSION
	mkdir -p $(BUILD)
	for f in cdmigrate cdmigrate-static; do \
	  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@SWIFT_SHARED@|$(SWIFT_SHARED)|g' \
	      -e 's|@ARCH@|$(ARCH)|g' -e 's|@SWIFT_LIBS@|$(SWIFT_LIBS)|g' scripts/$$f.pc.in > $(BUILD)/$$f.pc; \
	done

install: lib $(BUILD)/cdmigrate.pc $(BUILD)/cdmigrate-static.pc
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/cdmigrate.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBSO_REAL) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libcdmigrate.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libcdmigrate.so
	install -m 644 $(BUILD)/cdmigrate.pc $(BUILD)/cdmigrate-static.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/cdmigrate.h $(DESTDIR)$(PREFIX)/lib/libcdmigrate.a $(DESTDIR)$(PREFIX)/lib/libcdmigrate.so \
	      $(DESTDIR)$(PREFIX)/lib/$(SONAME) $(DESTDIR)$(PREFIX)/lib/libcdmigrate.so.$(VERSION) \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/cdmigrate.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/cdmigrate-static.pc

# The C tests, built with pkg-config from a temporary prefix: once against the archive, once
# against the shared library, both under AddressSanitizer + LeakSanitizer.
test-prefix:
	@rm -rf $(BUILD)/test-prefix && $(MAKE) --no-print-directory install PREFIX=$(CURDIR)/$(BUILD)/test-prefix

test-c: check-version check-abi test-prefix
	$(MAKE) --no-print-directory -C Tests/c PREFIX=$(CURDIR)/$(BUILD)/test-prefix run
	$(MAKE) --no-print-directory -C examples/c PREFIX=$(CURDIR)/$(BUILD)/test-prefix run

# The C examples against a temporary install; the last line is "N passed, M failed".
examples-c: test-prefix
	$(MAKE) --no-print-directory -C examples/c PREFIX=$(CURDIR)/$(BUILD)/test-prefix run

clean-c:
	rm -rf $(BUILD)
	$(MAKE) -C Tests/c clean
	$(MAKE) -C examples/c clean
