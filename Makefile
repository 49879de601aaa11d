# ftrun: `make` builds ./ftrun, `make run` runs the benchmark's cycles
# (results under results/runs/), `make test` runs the suite (SAN=1: on an
# ASan+UBSan build; CC=clang: built with clang), `make bench` measures what
# the runner itself costs, `make publish` writes the committed results and
# the README's tables, `make fleet-check` runs fleet.lua over ssh to four
# loopback hosts, `make fuzz` runs the API fuzz on the sanitizer build,
# `make lint` runs luacheck on the Lua and builds the C warning-free with
# gcc and clang, `make numa` checks the placement claims in qemu guests with
# several NUMA nodes.

CC      ?= cc
COMPILER := $(notdir $(CC))
CFLAGS  := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE
SANFLAGS := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

ifeq ($(SAN),1)
BUILD   := build/san
BIN     := ftrun-san
CFLAGS  += $(SANFLAGS)
LDFLAGS += -fsanitize=address,undefined
# The kernels are what is measured: no ASan shadow stores (they would add a
# fault per 8 pages touched); UBSan stays. malloc(2^62) must return NULL.
KERNEL_CFLAGS := -fno-sanitize=address
else ifneq ($(filter-out cc gcc,$(COMPILER)),)
BUILD   := build/$(COMPILER)
BIN     := ftrun-$(COMPILER)
else
BUILD   := build
BIN     := ftrun
endif

# The committed listing is gcc's at -O2; other builds write their own,
# so `make SAN=1` or `make CC=clang` never rewrites core/kernels_O2.s.
ifeq ($(BUILD),build)
ASM     := core/kernels_O2.s
else
ASM     := $(BUILD)/kernels_O2.s
endif

LUA_CFLAGS = $(shell pkg-config --cflags lua5.4)
LUA_LIBS   = $(shell pkg-config --libs lua5.4)

CORE    := kernels clock buffer pass counters samples machine interrupt parallel files \
           restore hugepages perf perfcount ksyms profile memfd tasks trace reporting floor
RUNNER  := main repl ft ft_aux ft_buffer ft_memfd ft_samples ft_timer ft_system ft_files ft_parallel \
           ft_hugepages ft_counters ft_profile ft_values ft_tasks task ft_trace ft_reporting ft_floor
OBJS    := $(CORE:%=$(BUILD)/core/%.o) $(RUNNER:%=$(BUILD)/runner/%.o)
DEPS    := $(BUILD)/.packages

.PHONY: all run test bench bench-tools publish publish-kind calibrate-published judge-repeats docs docs-check repeats plots fuzz lint clean packages calibrate install uninstall numa numa-publish

all: $(BIN) $(ASM)

# Debian's packages, installed when missing and we are root with apt-get,
# otherwise one line that names them. Every package a target uses is named
# here and installed without Recommends, so nothing arrives by chance: the
# C compiler and libc headers, Lua 5.4 with pkg-config (liblua5.4-dev brings
# libreadline-dev, which the link needs), lua-cjson, the JSON library the
# scripts write and read results with, and gnuplot, which draws every run's
# plots. The package lists are fetched first when they are empty (a fresh
# machine) and once more when an install fails (lists gone stale); another
# apt at work is waited for: dpkg's lock by apt itself, the lists' lock by
# trying again.
APT_GET = DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3
APT_UPDATE = for try in 1 2 3 4 5 6; do \
	  $(APT_GET) update >/dev/null && break; \
	  [ $$try = 6 ] && exit 1; echo "ftrun: apt-get update failed; trying again in 15 s" >&2; sleep 15; \
	done
APT_INSTALL = $(APT_GET) install --no-install-recommends
# $(call need,TEST,PACKAGES,WHAT)
need = if ! { $(1); } >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "ftrun: installing $(2) for $(3) (apt-get)"; \
	    if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then $(APT_UPDATE); fi; \
	    $(APT_INSTALL) $(2) >/dev/null || { $(APT_UPDATE); $(APT_INSTALL) $(2) >/dev/null; } || exit 1; \
	  else \
	    echo "ftrun: needs $(3): apt-get install $(2)" >&2; exit 1; \
	  fi; \
	fi
# The compiler that $(CC) names: gcc for cc and gcc, clang for clang.
CC_PACKAGE := $(if $(filter clang%,$(COMPILER)),clang,gcc)
$(DEPS):
	@$(call need,printf 'int main(void) { return 0; }\n' | $(CC) -x c -o /dev/null -,$(CC_PACKAGE) libc6-dev,a C compiler ($(CC)))
	@$(call need,pkg-config --exists lua5.4 && pkg-config --exists readline,liblua5.4-dev libreadline-dev pkg-config,Lua 5.4 and readline headers)
	@$(call need,ls /usr/lib/*/lua/5.4/cjson.so,lua-cjson,the JSON library)
	@$(call need,command -v gnuplot,gnuplot-nox,gnuplot for the plots)
	@mkdir -p $(@D) && touch $@

# -rdynamic: ft.profile names ftrun's own functions (ft_touch) through dladdr.
$(BIN): $(OBJS)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $^ $(LUA_LIBS) -lreadline -lm -lpthread

# The commit the binary is built from and whether the tree differed from it
# (outside what publishing writes, as provenance.lua's PATHSPEC), so a run
# where git cannot answer (installed, or a checkout another user owns: git's
# safe.directory) still records it. The state file is rewritten only when
# it changes, so a new HEAD or an edit rebuilds ft.o and nothing else does.
GIT_COMMIT := $(or $(shell git rev-parse HEAD 2>/dev/null),unknown)
GIT_DIRTY  := $(if $(shell git status --porcelain --untracked-files=normal -- . ':(exclude)results' \
                ':(exclude)README.md' ':(exclude)bench/README.md' ':(exclude)doc/ftrun.1' 2>/dev/null),1,0)
GIT_STATE  := $(BUILD)/git-state
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(GIT_STATE) 2>/dev/null)" = "$(GIT_COMMIT) $(GIT_DIRTY)" ] \
  || echo "$(GIT_COMMIT) $(GIT_DIRTY)" > $(GIT_STATE); })

$(BUILD)/core/kernels.o: CFLAGS += $(KERNEL_CFLAGS)
$(BUILD)/runner/ft.o: DEFS = -DFT_CFLAGS='"$(CFLAGS)"' -DFT_GIT_COMMIT='"$(GIT_COMMIT)"' -DFT_GIT_DIRTY=$(GIT_DIRTY)
$(BUILD)/runner/ft.o: Makefile $(GIT_STATE)
$(BUILD)/%.o: %.c | $(DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEFS) $(LUA_CFLAGS) -MMD -MP -c -o $@ $<

# The measured kernels' assembly, from the binary's flags less the sanitizers.
$(ASM): core/kernels.c core/kernels.h core/clock.h | $(DEPS)
	@mkdir -p $(@D)
	$(CC) $(filter-out -g $(SANFLAGS),$(CFLAGS)) -fno-asynchronous-unwind-tables -S -o $@ core/kernels.c

# The C reference for `make bench`: the same core/ objects and flags, no Lua.
REF      := $(BUILD)/bench/ref
REF_CORE := kernels clock buffer pass counters interrupt
$(REF): $(BUILD)/bench/ref.o $(REF_CORE:%=$(BUILD)/core/%.o)
	$(CC) $(LDFLAGS) -o $@ $^

# perf (Debian's linux-perf) for the bench's cross-check of ft.profile
# against perf record: installed like the packages above, but a bench
# without it still runs, and its block 7 says perf is unavailable.
bench-tools:
	-@$(call need,command -v perf >/dev/null && perf version >/dev/null 2>&1,linux-perf,perf for make bench's block 7)

bench: $(BIN) $(REF) bench-tools
	./$(BIN) bench/bench.lua $(REF)

run: all
	./$(BIN) cycles.lua

# A/A runs of the default run and of QUICK=1: each one's run-to-run spread,
# stored by machine, script and knobs in $CALIBRATIONS (default
# ~/.cache/ftrun/calibrations), where compare.lua finds it; never results/.
# (make publish's bench/calibrate.lua writes the published figures.)
calibrate: all
	./$(BIN) calibrate.lua -- cycles.lua
	./$(BIN) calibrate.lua -- cycles.lua QUICK=1

# The committed set: every run with PUBLISH=1, each replacing its files in
# results/ and its block in results/README.md only when it ran clean. A tree
# with uncommitted changes (outside results/, which publishing rewrites) is
# refused with exit 2 naming the files, since no file could say what was
# measured; ALLOW_DIRTY=1 publishes anyway and every file records the diff.
EXPERIMENTS := thp populate zeropage placement scaling recycle coldness pagesize attribution faults slowpages floor
export ALLOW_DIRTY
# Then REPEATS more default runs replace results/repeats/ (the claims rest
# on runs of one tree), calibrate-published measures how far such runs
# differ by chance, judge-repeats judges them with it, make docs writes
# every generated page and block from the JSON (publish/), and SEAL= keeps
# the sha256 of every measurement the publish wrote in results/SHA256SUMS,
# which make docs-check holds them to.
REPEATS ?= 2
KIND_DIR = ./$(BIN) -e 'local d, why = require("kinds").here(require("ft").project_dir) \
	  io.write(d or "") if not d then io.stderr:write("ftrun: cannot publish: ", why, "\n") os.exit(2) end'
publish: all $(REF) bench-tools
	@./$(BIN) -e 'os.exit(require("provenance").check_clean())' || exit 2
	@d=$$($(KIND_DIR)) || exit 2; [ "$$d" = results ] || { echo "make publish: results/ holds another kind's" \
	  "runs; this machine publishes into $$d: make publish-kind" >&2; exit 2; }
	./$(BIN) bench/calibrate.lua
	PUBLISH=1 ./$(BIN) cycles.lua
	PUBLISH=1 ./$(BIN) cycles.lua THP=always
	PUBLISH=1 ./$(BIN) cycles.lua THP=16K
	for e in $(EXPERIMENTS); do PUBLISH=1 ./$(BIN) $$e.lua || exit 1; done
	PUBLISH=1 ./$(BIN) slowpages.lua $(PERIOD_RUN)
	$(MAKE) numa-publish
	PUBLISH=1 ./$(BIN) bench/bench.lua $(REF) README=bench/README.md
	./$(BIN) plot.lua results
	rm -rf results/repeats
	for i in $$(seq $(REPEATS)); do $(MAKE) --no-print-directory repeats || exit 1; sleep 1; done
	$(MAKE) --no-print-directory calibrate-published judge-repeats
	$(MAKE) --no-print-directory docs
	d=$$($(KIND_DIR)) && ./$(BIN) publish/docs.lua SEAL=$$d

# A machine of another kind than results/ was published on (lib/kinds.lua)
# publishes its own set into results/<kind>/ (its default run, the THP
# runs, KIND_EXPERIMENTS, REPEATS repeats) and never touches results/'s
# files, bench/README.md or results/numa/; make docs then puts the kinds
# side by side. Its calibration.md (make calibrate's A/A figures) goes
# beside its runs.
KIND_EXPERIMENTS := host actouch attribution slowpages floor
# The slow pages' period decided by walks and their controls (exp-slowperiod-*):
# with 5 repetitions the second touch's sign test stays undecided here, and
# with 15 the working set's per-repetition ratio sat at the edge of SAME.
PERIOD_RUN := EXPERIMENT=period REPS=25
publish-kind: all
	@./$(BIN) -e 'os.exit(require("provenance").check_clean())' || exit 2
	@d=$$($(KIND_DIR)) || exit 2; [ "$$d" != results ] || { echo "make publish-kind: this machine" \
	  "publishes into results/, its kind's: make publish" >&2; exit 2; }
	d=$$($(KIND_DIR)) && ./$(BIN) bench/calibrate.lua RESULTS=$$d
	PUBLISH=1 ./$(BIN) cycles.lua
	PUBLISH=1 ./$(BIN) cycles.lua THP=always
	PUBLISH=1 ./$(BIN) cycles.lua THP=16K
	for e in $(KIND_EXPERIMENTS); do PUBLISH=1 ./$(BIN) $$e.lua || exit 1; done
	PUBLISH=1 ./$(BIN) slowpages.lua $(PERIOD_RUN)
	d=$$($(KIND_DIR)) && rm -rf $$d/repeats && for i in $$(seq $(REPEATS)); do \
	  $(MAKE) --no-print-directory repeats || exit 1; sleep 1; done
	$(MAKE) --no-print-directory calibrate-published judge-repeats
	$(MAKE) --no-print-directory docs
	d=$$($(KIND_DIR)) && ./$(BIN) publish/docs.lua SEAL=$$d

# Every generated document (publish/lib/registry.lua) made again from the
# committed measurements; docs-check makes them into a scratch copy and
# diffs, checks results/**/SHA256SUMS and the figure rule (tests/publish.lua).
docs: all
	./$(BIN) publish/docs.lua
docs-check: all
	./$(BIN) publish/docs.lua CHECK=1

# One more default run for the claims, kept in results/repeats/ (a machine of another
# kind: results/<kind>/repeats/, beside its published run) with
# its raw file, summary and JSON (its plots and samples are left out: the
# published run has them, and the committed results stay small).
repeats: all
	k=$$($(KIND_DIR)) && d=$$k/repeats/$$(date -u +%Y%m%dT%H%M%SZ) && RESULTS=$$d ./$(BIN) cycles.lua && \
	  rm -f $$d/*.i32 $$d/*.i32.txt $$d/*.dat $$d/*.gp $$d/*.svg

# How far runs of the published configuration (cycles.lua, no knobs) differ
# by chance on the kind's machine: PUBLISH_CAL_RUNS A/A runs by
# calibrate.lua, kept in <kind dir>/calibrations/ with what it printed
# (calibrate.txt), replaced only whole.
# judge-repeats then judges the published run against each repeat with it,
# one run a side, a verdict per row, into <kind dir>/repeats/compare.txt.
PUBLISH_CAL_RUNS ?= 6
calibrate-published: all
	d=$$($(KIND_DIR)) && rm -rf $$d/calibrations.new && \
	  mkdir -p $$d/calibrations.new && { CALIBRATIONS=$$d/calibrations.new ./$(BIN) calibrate.lua \
	  RUNS=$(PUBLISH_CAL_RUNS) -- cycles.lua > $$d/calibrations.new/calibrate.txt || \
	  { rm -rf $$d/calibrations.new; exit 1; }; } && rm -rf $$d/calibrations && mv $$d/calibrations.new $$d/calibrations
judge-repeats: all
	d=$$($(KIND_DIR)) && { CALIBRATIONS=$$d/calibrations ./$(BIN) compare.lua $$d/results.json \
	  $$d/repeats/*/results.json > $$d/repeats/compare.txt.new || { rm -f $$d/repeats/compare.txt.new; exit 1; }; } && \
	  mv $$d/repeats/compare.txt.new $$d/repeats/compare.txt

# Every SVG of the published results, redrawn from their files alone.
plots: all
	./$(BIN) plot.lua results

# make install PREFIX=/usr/local DESTDIR=: the executable in bin/, its
# scripts and their Lua library in share/ftrun/scripts/ (where the runner
# looks, relative to its own directory), the man page in share/man/man1/,
# the scripting reference its SEE ALSO names in share/doc/ftrun/. publish/
# stays behind: it rewrites this checkout's documents.
PREFIX  ?= /usr/local
INSTALL_BIN   = $(DESTDIR)$(PREFIX)/bin
INSTALL_SHARE = $(DESTDIR)$(PREFIX)/share/ftrun
INSTALL_MAN   = $(DESTDIR)$(PREFIX)/share/man/man1
# The paths go into the recipes unquoted, so a blank would split one into
# several (directories made in the checkout, rm -rf of the pieces): only
# plain path characters pass, checked from the environment, not the text.
export PREFIX DESTDIR
define check_install_paths
	@case "$$DESTDIR$$PREFIX" in *[!A-Za-z0-9/._+@%,:~-]*) \
	  echo "make: PREFIX='$$PREFIX' DESTDIR='$$DESTDIR': only letters, digits and / . _ + @ % , : ~ - are taken" \
	    "(a blank or a shell character would split or change the install paths)" >&2; exit 2;; esac
endef
INSTALL_DOC   = $(DESTDIR)$(PREFIX)/share/doc/ftrun
install: $(BIN)
	$(check_install_paths)
	install -d $(INSTALL_BIN) $(INSTALL_SHARE)/scripts $(INSTALL_MAN) $(INSTALL_DOC)
	install -m 755 $(BIN) $(INSTALL_BIN)/ftrun
	for f in $(shell find scripts -name '*.lua'); do \
	  install -D -m 644 $$f $(INSTALL_SHARE)/$$f || exit 1; done
	install -m 644 doc/ftrun.1 $(INSTALL_MAN)/ftrun.1
	install -m 644 doc/ft.md $(INSTALL_DOC)/ft.md

uninstall:
	$(check_install_paths)
	rm -f $(INSTALL_BIN)/ftrun $(INSTALL_MAN)/ftrun.1
	rm -rf $(INSTALL_SHARE) $(INSTALL_DOC)

FUZZ_SECONDS ?= 60
fuzz:
	$(MAKE) SAN=1 ftrun-san
	ASAN_OPTIONS=allocator_may_return_null=1 ./ftrun-san tests/fuzz/api.lua $${FUZZ_SEED:-$$(date +%s)} $(FUZZ_SECONDS)

# prove, tmux for the REPL's terminal tests, pgrep (procps) for the tasks'
# tests, what the plot tests read SVGs with: xmllint, rsvg-convert and
# pngtopnm, groff and col, which render the man page in its test, and
# ClusterShell's nodeset, which fleet.lua reads HOSTS with before it checks
# the rest of its knobs (tests/machines.lua runs those refusals).
TEST_TOOLS := $(BUILD)/.test-tools
$(TEST_TOOLS):
	@$(call need,command -v prove,perl,prove)
	@$(call need,command -v tmux,tmux,tmux for the REPL tests)
	@$(call need,command -v pgrep,procps,pgrep)
	@$(call need,command -v xmllint,libxml2-utils,xmllint)
	@$(call need,command -v rsvg-convert,librsvg2-bin,rsvg-convert)
	@$(call need,command -v pngtopnm,netpbm,pngtopnm)
	@$(call need,command -v groff,groff-base,groff for the man page test)
	@$(call need,command -v col,bsdextrautils,col for the man page test)
	@$(call need,command -v nodeset,clustershell,ClusterShell's nodeset for the fleet.lua tests)
	@mkdir -p $(@D) && touch $@

test: lint $(BIN) $(ASM) | $(TEST_TOOLS)
	FTRUN=./$(BIN) FTRUN_ASM=$(ASM) tests/lib/prove.sh ./$(BIN) tests/*.lua

# The placement claims on a kernel with several NUMA nodes: Debian's cloud
# kernel (downloaded, never installed) booted under qemu -accel tcg with a
# busybox initramfs holding ./ftrun; numa/run.sh names the knobs (NODES,
# NODE_MEM, LAYOUTS, NODE_MEMS, MIB, REPS, APPEND, TIMEOUT).
NUMA_TOOLS := build/.numa-tools
$(NUMA_TOOLS):
	@$(call need,command -v qemu-system-x86_64 >/dev/null,qemu-system-x86,qemu for make numa)
	@$(call need,command -v busybox >/dev/null && ! ldd "$$(command -v busybox)" >/dev/null 2>&1,busybox-static,a static busybox for make numa)
	@$(call need,command -v cpio >/dev/null,cpio,cpio for make numa)
	@mkdir -p $(@D) && touch $@

numa: $(BIN) | $(NUMA_TOOLS)
	numa/run.sh ./$(BIN)

# One 2-node guest run of placement.lua at its default size, into results/numa/.
numa-publish: $(BIN) | $(NUMA_TOOLS)
	NODE_MEMS=3072,3072 MIB=256 FAILURES=0 PUBLISH_DIR=results/numa numa/run.sh ./$(BIN)

# luacheck (Debian's lua-check) with .luacheckrc, and the C under both
# compilers with the warnings as errors (CFLAGS has -Wall -Wextra -Werror).
LINT_TOOLS := build/.lint-tools
$(LINT_TOOLS):
	@$(call need,command -v luacheck,lua-check,luacheck)
	@$(call need,command -v gcc,gcc,gcc for the lint)
	@$(call need,command -v clang,clang,clang for the lint)
	@mkdir -p $(@D) && touch $@

lint: | $(LINT_TOOLS) $(DEPS)
	luacheck --no-color -q scripts tests bench numa publish
	# one compiler per file, as many at once as there are CPUs
	for cc in gcc clang; do \
	  printf '%s\n' core/*.c runner/*.c bench/ref.c | \
	    xargs -P "$$(nproc)" -I{} $$cc $(CFLAGS) $(LUA_CFLAGS) -c -o /dev/null {} || exit 1; \
	done
	@echo "lint: luacheck clean; the C is warning-free under gcc and clang"

# fleet.lua over real ssh, offline: an sshd of its own on 127.0.0.11-14
# (four hosts node1..node4 with their own names and results folders, one
# planted slow) and node5 unreachable, with keys made for the check and
# removed after it (.ci/fleet-check). ClusterShell is the engine; openssh
# the transport on both ends.
FLEET_TOOLS := build/.fleet-tools
$(FLEET_TOOLS):
	@$(call need,command -v clush && command -v nodeset,clustershell,ClusterShell (clush) for make fleet-check)
	@$(call need,command -v ssh && command -v ssh-keygen && command -v scp,openssh-client,ssh for make fleet-check)
	@$(call need,test -x /usr/sbin/sshd,openssh-server,sshd for make fleet-check)
	@mkdir -p $(@D) && touch $@

.PHONY: fleet-check
fleet-check: $(BIN) | $(FLEET_TOOLS)
	.ci/fleet-check ./$(BIN)

# README's two commands, as root in a chroot on a new minbase Debian root
# with only git, make and ca-certificates (debootstrap): .ci/fresh-check.
.PHONY: fresh-check
fresh-check:
	.ci/fresh-check

clean:
	rm -rf build ftrun ftrun-san ftrun-clang

-include $(OBJS:.o=.d) $(BUILD)/bench/ref.d
