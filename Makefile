# Builds the C libraries, installs them with the header and pkg-config files, runs the C tests.
#
#   make                 build/lib/libcdmigrate.a and build/lib/libcdmigrate.so.$(VERSION), with the
#                        symlinks libcdmigrate.so.$(MAJOR) (the SONAME) and libcdmigrate.so
#   make install PREFIX=/usr/local
#   make test-c          the version and ABI checks, then the C tests against a temporary install,
#                        static and shared, under ASan+LSan, then the C examples (make examples-c)
#   make check-version   VERSION agrees with every generated place (scripts/version.py --check)
#   make check-abi       the C ABI written alike everywhere: the header against the Swift @_cdecl
#                        functions, the Python binding's ctypes prototypes and Structures (sizes and
#                        offsets as the C compiler lays them out) and the shared library's SONAME,
#                        symbol versions and exports (scripts/check-abi.py)
#
# The version is written once, in VERSION; scripts/version.py generates it into the header, the
# Swift sources and the Python package (those are committed, so SwiftPM and pip need no step).
#   make examples-c      the five reference migrations in C (examples/c), each checking its result
#
#   make cli             build/bin/cdmigrate: the command line, Swift runtime linked in, stripped
#   make install         also installs bin/cdmigrate, its man pages, bash/zsh/fish completion scripts, and the
#                        static Swift runtime cdmigrate-static.pc links (lib/cdmigrate/swift_static)
#   make dist            build/dist/cdmigrate-$(VERSION)-linux-$(ARCH).tar.gz and its .sha256
#   make test-standalone the release tarball's command and a C host linked through its
#                        cdmigrate-static.pc, and the wheel, run with the Swift toolchain hidden
#
# libcdmigrate.a is SwiftPM's static product (engine + C API). libcdmigrate.so is linked from the
# command line's product (engine + C API + the commands, for cdm_command_line_run) with the
# toolchain's static Swift runtime, so hosts need no Swift toolchain at run time; so is the
# cdmigrate executable (-static-stdlib), and cdmigrate-static.pc links C hosts the same way.

SWIFT        ?= swift
CC           ?= cc
PREFIX       ?= /usr/local
# The toolchain's usr directory (where bin/swift lives).
SWIFT_ROOT   ?= $(patsubst %/bin/,%,$(dir $(shell command -v $(SWIFT) 2>/dev/null)))
SWIFT_ROOT   := $(if $(SWIFT_ROOT),$(SWIFT_ROOT),/opt/swift/usr)
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
# --static-swift-stdlib links executables with the static Swift runtime (and Foundation, where used),
# so that they run without the toolchain. SwiftPM passes it to the compile steps too, so the archive
# is built with it as well: both products then share one set of compiled modules.
# --disable-local-rpath: no $ORIGIN run path in the executable (it loads no library beside itself).
SWIFT_RELEASE := $(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath $(RELEASE_FLAGS)

$(LIBA): $(SOURCES) Makefile
	$(SWIFT_RELEASE) --product CDMigrate
	mkdir -p $(BUILD)/lib
	cp "$$($(SWIFT_RELEASE) --show-bin-path)/libCDMigrate.a" $@

$(LIBCLI): $(SOURCES) Makefile
	$(SWIFT_RELEASE) --product CDMigrateCommandLine
	mkdir -p $(BUILD)/lib
	cp "$$($(SWIFT_RELEASE) --show-bin-path)/libCDMigrateCommandLine.a" $@

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
	scripts/check-needed.sh $(SWIFT_ROOT) $@

$(LIBSO): $(LIBSO_REAL)
	ln -sf libcdmigrate.so.$(VERSION) $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME) $@

# The command line, with the Swift runtime (and Foundation, if the command uses it) linked in
# statically, stripped; scripts/check-needed.sh refuses any library but the C library's and those
# the docs name (sqlite3, jansson, libxml2, zlib), and any run path into the toolchain. The shell
# completion scripts and the man pages (scripts/man-pages.py: cdmigrate.1, cdmigrate-COMMAND.1)
# come from the command's own help.
CLI          := $(BUILD)/bin/cdmigrate
COMPLETIONS  := $(BUILD)/share/bash-completion/completions/cdmigrate $(BUILD)/share/zsh/site-functions/_cdmigrate \
                $(BUILD)/share/fish/vendor_completions.d/cdmigrate.fish
MAN_DIR      := $(BUILD)/share/man/man1
.PHONY: cli
cli: $(CLI) $(COMPLETIONS) $(MAN_DIR)/cdmigrate.1

$(CLI): $(SOURCES) Makefile scripts/check-needed.sh
	$(SWIFT_RELEASE) --product cdmigrate
	mkdir -p $(BUILD)/bin
	cp "$$($(SWIFT_RELEASE) --show-bin-path)/cdmigrate" $@.tmp
	strip $@.tmp
	scripts/check-needed.sh $(SWIFT_ROOT) $@.tmp
	mv $@.tmp $@

$(BUILD)/share/bash-completion/completions/cdmigrate: $(CLI)
	mkdir -p $(@D) && $(CLI) --generate-completion-script bash > $@
$(BUILD)/share/zsh/site-functions/_cdmigrate: $(CLI)
	mkdir -p $(@D) && $(CLI) --generate-completion-script zsh > $@
$(BUILD)/share/fish/vendor_completions.d/cdmigrate.fish: $(CLI)
	mkdir -p $(@D) && $(CLI) --generate-completion-script fish > $@

$(MAN_DIR)/cdmigrate.1: $(CLI) scripts/man-pages.py VERSION
	rm -rf $(MAN_DIR) && python3 scripts/man-pages.py $(CLI) $(MAN_DIR) $(VERSION)

# The API references (scripts/docs.sh): DocC for the Swift engine, pdoc for the Python package, the
# header for C, the man pages; into build/docs (index.html).
.PHONY: docs
docs: $(CLI) $(MAN_DIR)/cdmigrate.1
	scripts/docs.sh $(CLI) $(MAN_DIR)

check-version:
	python3 scripts/version.py --check

check-abi: $(LIBSO)
	python3 scripts/check-abi.py --library $(LIBSO_REAL) --soname $(SONAME) --node CDMIGRATE_$(MAJOR)

# cdmigrate.pc: the shared library (Libs), and what linking the archive needs (Libs.private, --static).
# cdmigrate-static.pc: the archive by path, for hosts that have both installed and want the static one.
# Both link the archive with the static Swift runtime installed beside it (lib/cdmigrate/swift_static:
# swiftrt.o and the few runtime archives SWIFT_LIBS names, copied from the toolchain), so a host
# linked statically neither builds nor runs with the toolchain. prefix is the .pc file's own place
# (${pcfiledir}/../..), so an unpacked release tarball works wherever it is.
RUNTIME_DIR  := lib/cdmigrate/swift_static
RUNTIME      := $(SWIFT_STATIC)/$(ARCH)/swiftrt.o $(foreach l,$(patsubst -l%,%,$(SWIFT_LIBS)),$(SWIFT_STATIC)/lib$(l).a)
$(BUILD)/cdmigrate.pc $(BUILD)/cdmigrate-static.pc: scripts/cdmigrate.pc.in scripts/cdmigrate-static.pc.in VERSION Makefile
	mkdir -p $(BUILD)
	for f in cdmigrate cdmigrate-static; do \
	  sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@RUNTIME_DIR@|$(RUNTIME_DIR)|g' \
	      -e 's|@ARCH@|$(ARCH)|g' -e 's|@SWIFT_LIBS@|$(SWIFT_LIBS)|g' scripts/$$f.pc.in > $(BUILD)/$$f.pc; \
	done

install: lib cli $(BUILD)/cdmigrate.pc $(BUILD)/cdmigrate-static.pc
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/$(RUNTIME_DIR)/$(ARCH) \
	  $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 include/cdmigrate.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBSO_REAL) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libcdmigrate.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libcdmigrate.so
	install -m 644 $(BUILD)/cdmigrate.pc $(BUILD)/cdmigrate-static.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 644 $(SWIFT_STATIC)/$(ARCH)/swiftrt.o $(DESTDIR)$(PREFIX)/$(RUNTIME_DIR)/$(ARCH)/
	install -m 644 $(filter %.a,$(RUNTIME)) $(DESTDIR)$(PREFIX)/$(RUNTIME_DIR)/
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/share/bash-completion/completions/cdmigrate $(DESTDIR)$(PREFIX)/share/bash-completion/completions/
	install -m 644 $(BUILD)/share/zsh/site-functions/_cdmigrate $(DESTDIR)$(PREFIX)/share/zsh/site-functions/
	install -m 644 $(BUILD)/share/fish/vendor_completions.d/cdmigrate.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/
	install -m 644 $(MAN_DIR)/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/cdmigrate.h $(DESTDIR)$(PREFIX)/lib/libcdmigrate.a $(DESTDIR)$(PREFIX)/lib/libcdmigrate.so \
	      $(DESTDIR)$(PREFIX)/lib/$(SONAME) $(DESTDIR)$(PREFIX)/lib/libcdmigrate.so.$(VERSION) \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/cdmigrate.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/cdmigrate-static.pc \
	      $(DESTDIR)$(PREFIX)/bin/cdmigrate $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cdmigrate \
	      $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_cdmigrate $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/cdmigrate.fish \
	      $(DESTDIR)$(PREFIX)/share/man/man1/cdmigrate.1 $(DESTDIR)$(PREFIX)/share/man/man1/cdmigrate-*.1
	rm -rf $(DESTDIR)$(PREFIX)/lib/cdmigrate

# The release tarball: an install tree (bin, include, lib with the .pc files and the static Swift
# runtime, share with the completion scripts) with the library stripped, and beside it the README,
# the changelog, the licence and the Swift runtime's licence (Apache 2.0 with the Runtime Library
# Exception: the runtime is linked into the binaries and shipped for cdmigrate-static.pc); and its
# SHA-256 (sha256sum -c).
DIST_NAME    := cdmigrate-$(VERSION)-linux-$(ARCH)
DIST         := $(BUILD)/dist/$(DIST_NAME).tar.gz
.PHONY: dist
dist: $(DIST)
$(DIST): lib cli $(BUILD)/cdmigrate.pc $(BUILD)/cdmigrate-static.pc README.md LICENSE CHANGELOG.md
	rm -rf $(BUILD)/dist && mkdir -p $(BUILD)/dist/$(DIST_NAME)
	$(MAKE) --no-print-directory install PREFIX=/ DESTDIR=$(CURDIR)/$(BUILD)/dist/$(DIST_NAME)
	strip --strip-unneeded $(BUILD)/dist/$(DIST_NAME)/lib/libcdmigrate.so.$(VERSION)
	install -m 644 README.md LICENSE CHANGELOG.md $(BUILD)/dist/$(DIST_NAME)/
	install -m 644 $(SWIFT_ROOT)/share/swift/LICENSE.txt $(BUILD)/dist/$(DIST_NAME)/LICENSE.swift-runtime.txt
	tar -C $(BUILD)/dist --owner=0 --group=0 --numeric-owner -czf $@ $(DIST_NAME)
	cd $(BUILD)/dist && sha256sum $(DIST_NAME).tar.gz > $(DIST_NAME).tar.gz.sha256
	@echo "built $@ ($$(du -h $@ | cut -f1)); $(DIST).sha256"

# The release tarball unpacked (after sha256sum -c), with the toolchain hidden
# (scripts/without-toolchain.sh): its command (migrate, check, --policies with a C library), a C host
# linked through its cdmigrate-static.pc, and the wheel (WHEEL=…, by default the one in bindings/python/dist, built when there is none).
WHEEL ?= $(firstword $(wildcard bindings/python/dist/cdmigrate-$(VERSION)-*manylinux*.whl))
.PHONY: test-standalone
test-standalone: $(DIST)
	cd $(BUILD)/dist && sha256sum -c $(DIST_NAME).tar.gz.sha256
	rm -rf $(BUILD)/dist-test && mkdir -p $(BUILD)/dist-test && tar -C $(BUILD)/dist-test -xzf $(DIST)
	$(if $(WHEEL),,$(MAKE) --no-print-directory -C bindings/python wheel)
	scripts/test-standalone.sh $(SWIFT_ROOT) $(CURDIR)/$(BUILD)/dist-test/$(DIST_NAME) \
	  $(CURDIR)/$(or $(WHEEL),$$(ls bindings/python/dist/cdmigrate-$(VERSION)-*manylinux*.whl))

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
