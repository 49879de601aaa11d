# ftrun: `make` builds ./ftrun, `make run` runs the benchmark's cycles
# (results under results/runs/), `make test` runs the suite (SAN=1: on an
# ASan+UBSan build; CC=clang: built with clang), `make bench` measures what
# the runner itself costs, `make publish` writes the committed results and
# the README's tables, `make fuzz` runs the API fuzz on the sanitizer build.

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

CORE    := kernels clock buffer pass counters samples machine interrupt parallel files memfd tasks
RUNNER  := main ft ft_buffer ft_memfd ft_samples ft_system ft_parallel ft_values ft_tasks
OBJS    := $(CORE:%=$(BUILD)/core/%.o) $(RUNNER:%=$(BUILD)/runner/%.o)
DEPS    := $(BUILD)/.packages

.PHONY: all run test bench publish fuzz clean packages

all: $(BIN) $(ASM)

# Debian's Lua 5.4 and pkg-config: installed when missing and we are root
# with apt-get, otherwise one line that names them.
$(DEPS):
	@if ! pkg-config --exists lua5.4 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "ftrun: installing liblua5.4-dev pkg-config (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liblua5.4-dev pkg-config >/dev/null || exit 1; \
	  else \
	    echo "ftrun: needs Lua 5.4 headers: apt-get install liblua5.4-dev pkg-config" >&2; exit 1; \
	  fi; \
	fi
	@mkdir -p $(@D) && touch $@

$(BIN): $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LUA_LIBS) -lreadline -lm -lpthread

$(BUILD)/core/kernels.o: CFLAGS += $(KERNEL_CFLAGS)
$(BUILD)/%.o: %.c | $(DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LUA_CFLAGS) -MMD -MP -c -o $@ $<

# The measured kernels' assembly, from the binary's flags less the sanitizers.
$(ASM): core/kernels.c core/kernels.h core/clock.h | $(DEPS)
	@mkdir -p $(@D)
	$(CC) $(filter-out -g $(SANFLAGS),$(CFLAGS)) -fno-asynchronous-unwind-tables -S -o $@ core/kernels.c

# The C reference for `make bench`: the same core/ objects and flags, no Lua.
REF      := $(BUILD)/bench/ref
REF_CORE := kernels clock buffer pass counters interrupt
$(REF): $(BUILD)/bench/ref.o $(REF_CORE:%=$(BUILD)/core/%.o)
	$(CC) $(LDFLAGS) -o $@ $^

bench: $(BIN) $(REF)
	./$(BIN) bench/bench.lua $(REF)

run: all
	./$(BIN) cycles.lua

# The committed set: every run with PUBLISH=1, each replacing its files in
# results/ and its block in README.md only when it ran clean.
EXPERIMENTS := thp populate zeropage placement scaling recycle coldness
publish: all $(REF)
	PUBLISH=1 ./$(BIN) cycles.lua
	PUBLISH=1 ./$(BIN) cycles.lua THP=always
	for e in $(EXPERIMENTS); do PUBLISH=1 ./$(BIN) $$e.lua || exit 1; done
	PUBLISH=1 ./$(BIN) bench/bench.lua $(REF)

FUZZ_SECONDS ?= 60
fuzz:
	$(MAKE) SAN=1 ftrun-san
	ASAN_OPTIONS=allocator_may_return_null=1 ./ftrun-san tests/fuzz/api.lua $${FUZZ_SEED:-$$(date +%s)} $(FUZZ_SECONDS)

# prove, and tmux for the REPL's terminal tests (skipped without it).
TEST_TOOLS := $(BUILD)/.test-tools
$(TEST_TOOLS):
	@for t in prove:perl tmux:tmux; do \
	  command -v $${t%%:*} >/dev/null && continue; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "ftrun: installing $${t#*:} (apt-get)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $${t#*:} >/dev/null || exit 1; \
	  else echo "ftrun: the tests need $${t%%:*}: apt-get install $${t#*:}" >&2; exit 1; fi; \
	done
	@mkdir -p $(@D) && touch $@

test: $(BIN) $(ASM) | $(TEST_TOOLS)
	FTRUN=./$(BIN) FTRUN_ASM=$(ASM) prove --exec ./$(BIN) tests/*.lua

clean:
	rm -rf build ftrun ftrun-san ftrun-clang

-include $(OBJS:.o=.d)
