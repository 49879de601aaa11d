# ftrun: `make` builds ./ftrun, `make run` runs the benchmark's cycles,
# `make test` runs the suite (SAN=1: on an ASan+UBSan build), `make bench`
# measures what the runner itself costs.

CC      ?= cc
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
export ASAN_OPTIONS := allocator_may_return_null=1
else
BUILD   := build
BIN     := ftrun
endif

LUA_CFLAGS = $(shell pkg-config --cflags lua5.4)
LUA_LIBS   = $(shell pkg-config --libs lua5.4)

CORE    := kernels clock buffer pass counters samples machine interrupt parallel files
RUNNER  := main ft ft_buffer ft_samples ft_system ft_parallel
OBJS    := $(CORE:%=$(BUILD)/core/%.o) $(RUNNER:%=$(BUILD)/runner/%.o)
DEPS    := $(BUILD)/.packages

.PHONY: all run test bench clean packages

all: $(BIN) core/kernels_O2.s

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

# The measured kernels' assembly, from the binary's own flags.
core/kernels_O2.s: core/kernels.c core/kernels.h core/clock.h
	$(CC) $(filter-out -g,$(CFLAGS)) -fno-asynchronous-unwind-tables -S -o $@ core/kernels.c

# The C reference for `make bench`: the same core/ objects and flags, no Lua.
REF      := $(BUILD)/bench/ref
REF_CORE := kernels clock buffer pass counters interrupt
$(REF): $(BUILD)/bench/ref.o $(REF_CORE:%=$(BUILD)/core/%.o)
	$(CC) $(LDFLAGS) -o $@ $^

bench: $(BIN) $(REF)
	./$(BIN) bench/bench.lua $(REF)

run: all
	./$(BIN) cycles.lua

test: $(BIN) core/kernels_O2.s
	@command -v prove >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq perl >/dev/null; } \
	  || { echo "ftrun: the tests need prove: apt-get install perl" >&2; exit 1; }
	FTRUN=./$(BIN) prove --exec ./$(BIN) tests/*.lua

clean:
	rm -rf build ftrun ftrun-san

-include $(OBJS:.o=.d)
