# probecheck — build, test and report.
#
#   make            build the CLI, tools, fixtures and unit tests into $(O)
#   make check      install missing deps, build, run unit tests + all suites,
#                   regenerate RESULTS.md
#   make help       everything else
#
# Out-of-tree: O=dir.  V=1 shows full commands.  COVERAGE=1 builds with gcov.
# SANITIZE=address,undefined builds with sanitizers.

SHELL    := /bin/bash
# Build with every CPU unless -j was given: a fresh clone's build is a
# fifth of make check's wall time serially, half of that with -j2.  The
# test recipes themselves run one at a time (their invariants are
# machine-wide).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif
O        ?= build
V        ?= 0
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ABS_O    := $(abspath $(O))

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Missing dependencies are installed by ci/install-deps (idempotent, root,
# Debian 12; ~20 ms when nothing is missing), so a fresh machine needs
# nothing by hand.  NO_INSTALL=1 skips it.
ifeq ($(NO_INSTALL),)
ifneq ($(filter-out help clean,$(or $(MAKECMDGOALS),all)),)
$(shell ./ci/install-deps >&2)
ifneq ($(.SHELLSTATUS),0)
$(error ci/install-deps failed: see the messages above)
endif
endif
endif

PKGS      := libbpf libelf zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -lelf -lz)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
            -Wformat=2 -MMD -MP -I$(O) -iquote providers -iquote harness/cli $(PKG_CFLAGS)
LDLIBS   += $(PKG_LIBS) -lpthread
ifeq ($(COVERAGE),1)
CFLAGS   += --coverage -O0
LDFLAGS  += --coverage
endif
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

.DELETE_ON_ERROR:
.SUFFIXES:
.PHONY: all check check-unit check-suites coverage valgrind soak flake matrix conformance clean help fixtures

# ---- sources: no hand-kept lists; every file present takes part -----------
PROV_SRCS  := $(wildcard providers/*.c)
PROV_OBJS  := $(PROV_SRCS:%.c=$(O)/%.o)
BPF_SRCS   := $(wildcard providers/bpf/*.bpf.c)
BPF_OBJS   := $(BPF_SRCS:providers/bpf/%.bpf.c=$(O)/bpf/%.bpf.o)
SKELS      := $(BPF_SRCS:providers/bpf/%.bpf.c=$(O)/%.skel.h)
CLI_SRCS   := $(wildcard harness/cli/*.c)
CLI_OBJS   := $(CLI_SRCS:%.c=$(O)/%.o)
# harness/tools/X.c is the tool X, but for the code the tools share.
TOOL_LIB_SRCS := harness/tools/jsonl.c
TOOL_LIB_OBJS := $(TOOL_LIB_SRCS:%.c=$(O)/%.o)
TOOL_SRCS  := $(filter-out %.bpf.c $(TOOL_LIB_SRCS),$(wildcard harness/tools/*.c))
TOOLS      := $(TOOL_SRCS:harness/tools/%.c=$(O)/tools/%)
UNIT_SRCS  := $(wildcard suites/unit/test_*.c)
UNITS      := $(UNIT_SRCS:suites/unit/%.c=$(O)/unit/%)
# Unit binaries that mostly wait for the kernel: a suite runs them beside
# the others, not run-unit (suites/unit/wait.list says which and why).
UNITS_WAIT := $(addprefix $(O)/unit/,$(shell sed 's/\#.*//' suites/unit/wait.list))
UNITS_RUN  := $(filter-out $(UNITS_WAIT),$(UNITS))
PROBECHECK := $(O)/probecheck

# Skeletons are inputs of every object; keep them between builds.
.SECONDARY: $(SKELS) $(BPF_OBJS) $(O)/vmlinux.h $(O)/tools/clobber.bpf.o $(O)/tools/clobber.skel.h \
	    $(O)/tools/libbpf_usdt.bpf.o $(O)/tools/libbpf_usdt.skel.h $(TOOL_LIB_OBJS)

all: $(PROBECHECK) $(TOOLS) $(UNITS) fixtures

$(O) $(O)/providers $(O)/harness/cli $(O)/harness/tools $(O)/bpf $(O)/tools $(O)/unit $(O)/fixtures:
	$(Q)mkdir -p $@

# ---- BPF: vmlinux.h -> .bpf.o -> .skel.h ---------------------------------
# vmlinux.h comes from the running kernel's BTF; CO-RE relocations make the
# object portable to other kernels (6.1 .. 6.18) without rebuilding.
$(O)/vmlinux.h: | $(O)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(O)/bpf/%.bpf.o: providers/bpf/%.bpf.c $(O)/vmlinux.h providers/pc_bpf.h | $(O)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(O) -Iproviders \
		-c $< -o $@
	$(Q)llvm-strip -g $@

$(O)/%.skel.h: $(O)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- C objects ------------------------------------------------------------
$(O)/providers/%.o: providers/%.c $(SKELS) | $(O)/providers
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(O)/harness/cli/%.o: harness/cli/%.c $(SKELS) | $(O)/harness/cli
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(PROBECHECK): $(CLI_OBJS) $(PROV_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# A test tool with a BPF program of its own: harness/tools/X.bpf.c ->
# $(O)/tools/X.skel.h, included as "tools/X.skel.h".
$(O)/tools/%.bpf.o: harness/tools/%.bpf.c $(O)/vmlinux.h | $(O)/tools
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(O) -c $< -o $@
	$(Q)llvm-strip -g $@

$(O)/tools/%.skel.h: $(O)/tools/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(O)/tools/pc-clobber: $(O)/tools/clobber.skel.h
$(O)/tools/pc-libbpf-usdt: $(O)/tools/libbpf_usdt.skel.h
$(O)/tools/libbpf_usdt.bpf.o: CLANG += -idirafter /usr/include/$(shell $(CC) -dumpmachine)

# The tools read JSON lines with libjansson (harness/tools/jsonl.c).
JANSSON_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)
JANSSON_LIBS   := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)

$(O)/harness/tools/%.o: harness/tools/%.c | $(O)/harness/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(JANSSON_CFLAGS) -c $< -o $@

$(O)/tools/%: harness/tools/%.c $(PROV_OBJS) $(TOOL_LIB_OBJS) | $(O)/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(JANSSON_CFLAGS) $(LDFLAGS) $< $(TOOL_LIB_OBJS) $(PROV_OBJS) $(LDLIBS) $(JANSSON_LIBS) -o $@

$(O)/unit/%: suites/unit/%.c suites/unit/unit.h suites/unit/attachfail.h suites/unit/unitsite.h suites/unit/nomem.h suites/unit/interpose.h $(PROV_OBJS) | $(O)/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(UNIT_CPPFLAGS) -iquote suites/unit $(LDFLAGS) $< $(UNIT_OBJS) $(PROV_OBJS) $(LDLIBS) -o $@

# test_fuzzreplay runs the fuzz targets' bodies (suites/fuzz, built here
# with $(CC), without libFuzzer) on every committed input; fuzz_cli needs
# the CLI's objects, all but the one with main().
FUZZ_SRCS    := $(wildcard suites/fuzz/fuzz_*.c)
FUZZ_ALL     := $(FUZZ_SRCS:suites/fuzz/fuzz_%.c=%)
CLI_LIB_OBJS := $(filter-out $(O)/harness/cli/probecheck.o,$(CLI_OBJS))
FUZZ_BODY_OBJS := $(FUZZ_SRCS:suites/fuzz/%.c=$(O)/unit/fuzz/%.o)

$(O)/unit/fuzz/%.o: suites/fuzz/%.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(O)/unit/test_fuzzreplay: $(FUZZ_BODY_OBJS) $(CLI_LIB_OBJS)
$(O)/unit/test_fuzzreplay: UNIT_OBJS = $(FUZZ_BODY_OBJS) $(CLI_LIB_OBJS)
$(O)/unit/test_fuzzreplay: UNIT_CPPFLAGS = -DPC_FUZZ_DIR='"$(abspath suites/fuzz)"' \
	-DPC_FUZZ_LIST='$(foreach t,$(FUZZ_ALL),X($(t)))'

# ---- fixtures: their own rules (variants) live beside them ----------------
include $(sort $(wildcard fixtures/*.mk))

# ---- tests ----------------------------------------------------------------
# Suites at once (harness/run/run-suites: each on its own copies; the
# serial ones alone after).  Tests mostly wait (RCU grace periods at
# detach, barriers, process start), so twice the cores keeps them busy;
# JOBS=1 runs them one after another, with the same verdicts.
JOBS     ?= $(shell echo $$(( $$(nproc) * 2 )))
export PROBECHECK_JOBS := $(JOBS)
BATS     ?= bats
SUITES   ?= $(sort $(wildcard suites/*.bats))
# The suites that run built C code: the gcov and sanitizer passes run
# these (reportui renders the HTML report in Chromium from synthetic
# files and runs none of it: a minute of browser time each pass, for no
# line covered or checked).
C_SUITES ?= $(filter-out suites/reportui.bats,$(SUITES))
RESULTS_DIR := $(O)/results

check-unit: $(UNITS)
	$(Q)mkdir -p $(RESULTS_DIR)
	$(Q)./harness/run/run-unit $(RESULTS_DIR) $(UNITS_RUN)

check-suites: all
	$(Q)mkdir -p $(RESULTS_DIR)
	$(Q)PROBECHECK_BUILD=$(ABS_O) ./harness/run/run-suites $(RESULTS_DIR) $(SUITES)

# One entry point: unit tests, suites, valgrind, and RESULTS.md.  Every
# step runs even when an earlier one failed so the report is complete.
# The exit status is harness/report/report check's: 0 iff every unit binary and
# valgrind passed and every suite test passed, skipped or reproduced a
# kernel problem listed in ci/kernel-issues (a finding, not a failure);
# it ends with a block listing the findings.  Coverage is `make coverage`
# (a second, gcov, build and pass: CI runs it after check); it adds its
# figure to RESULTS.md without costing check's wall time.
check: all
	$(Q)rm -rf $(RESULTS_DIR) && mkdir -p $(RESULTS_DIR)
	$(Q)start=$$(date +%s); w=0; \
	./harness/run/run-unit $(RESULTS_DIR) $(UNITS_RUN); u=$$?; \
	PROBECHECK_BUILD=$(ABS_O) ./harness/run/run-suites $(RESULTS_DIR) $(SUITES); s=$$?; \
	PROBECHECK_BUILD=$(ABS_O) ./harness/run/run-valgrind $(O)/valgrind 2>&1 | \
		tee $(RESULTS_DIR)/valgrind.txt; v=$${PIPESTATUS[0]}; \
	echo $$(( $$(date +%s) - start )) > $(RESULTS_DIR)/wall_s; \
	$(MAKE) --no-print-directory results || w=1; \
	./harness/report/report check --status run-unit=$$u --status run-suites=$$s --status run-valgrind=$$v \
		--status make-results=$$w $(RESULTS_DIR)

# The HTML report (harness/report/pcreport/html.py) into $(REPORT_DIR),
# from the same inputs as RESULTS.md: $(call report_html,RESULTS,WALL_S).
# Only the matrices of this commit are shown.  Debian's python3: the
# report needs its python3-jinja2 and python3-matplotlib (ci/packages.txt),
# which a python3 found first on PATH (pyenv, a venv) may lack.
PYTHON3    ?= /usr/bin/python3
REPORT_DIR := $(O)/report
report_html = if $(PYTHON3) ./harness/report/report html \
		--commit "$$(git describe --always --dirty 2>/dev/null || echo unknown)" $(REPORT_DIR) $(1) $(2) \
		$$(ls -d $(O)/matrix* 2>/dev/null) $(wildcard $(CONFORMANCE_DIR)) >/dev/null; then \
		echo "probecheck: $(REPORT_DIR)/index.html updated"; \
	else \
		echo "probecheck: $(REPORT_DIR) NOT updated (see above)"; false; \
	fi

# RESULTS.md (one page: harness/report/pcreport/summary_md.py) and
# RESULTS/DETAILS.md (every section in full: results_md.py) from the same
# inputs: $(call results_md,RESULTS,WALL_S).
results_md = mkdir -p $(1) && args="$(1) $(2) $$(ls -d $(O)/matrix* 2>/dev/null) $(wildcard $(CONFORMANCE_DIR))"; \
	if ./harness/report/report results $$args > RESULTS.md.tmp && \
		./harness/report/report results --full $$args > $(1)/DETAILS.md.tmp; then \
		mv RESULTS.md.tmp RESULTS.md && mv $(1)/DETAILS.md.tmp $(1)/DETAILS.md && \
		echo "probecheck: RESULTS.md and $(1)/DETAILS.md updated"; \
	else \
		rm -f RESULTS.md.tmp $(1)/DETAILS.md.tmp; echo "probecheck: RESULTS.md NOT updated (see above)"; false; \
	fi

# RESULTS.md and the HTML report from the last check's results (with the
# coverage figure when `make coverage` ran since) and every matrix
# directory.
.PHONY: results
results:
	$(Q)rm -rf $(RESULTS_DIR)/bench; \
	for t in $(O)/bench/*/bench.tsv; do \
		[ -f "$$t" ] || continue; n=$$(basename $$(dirname $$t)); mkdir -p $(RESULTS_DIR)/bench; \
		cp $$t $(RESULTS_DIR)/bench/$$n.tsv && cp $$(dirname $$t)/bench.meta $(RESULTS_DIR)/bench/$$n.meta; \
	done
	$(Q)$(call results_md,$(RESULTS_DIR),$$(cat $(RESULTS_DIR)/wall_s 2>/dev/null || echo 0))
	$(Q)$(call report_html,$(RESULTS_DIR),$$(cat $(RESULTS_DIR)/wall_s 2>/dev/null || echo 0))

# Unit tests and suites on a gcov build (-O0, in $(O)-cov); the figure is
# for providers/ and harness/.  Test failures here are reported, not
# fatal: `check` judges the normal build.  After a `make check`, the
# figure goes into its results and RESULTS.md.
coverage:
	$(Q)rm -rf $(O)-cov
	$(Q)$(MAKE) --no-print-directory O=$(O)-cov COVERAGE=1 NO_INSTALL=1 all
	$(Q)mkdir -p $(O)-cov/results
	$(Q)./harness/run/run-unit $(O)-cov/results $(UNITS_RUN:$(O)/%=$(O)-cov/%) || true
	$(Q)PROBECHECK_BUILD=$(abspath $(O)-cov) ./harness/run/run-suites $(O)-cov/results $(C_SUITES) \
		| tail -n 1 | sed 's/^/coverage run: /' > $(O)-cov/run.txt || true
	$(Q)cat $(O)-cov/run.txt
	$(Q)set -o pipefail; { ./harness/run/coverage-report $(O)-cov; cat $(O)-cov/run.txt; } | tee $(O)-cov/coverage.txt
	$(Q)if [ -f $(RESULTS_DIR)/suites.tsv ]; then \
		cp $(O)-cov/coverage.txt $(RESULTS_DIR)/coverage.txt && $(MAKE) --no-print-directory results; \
	fi

valgrind: all
	$(Q)PROBECHECK_BUILD=$(ABS_O) ./harness/run/run-valgrind $(O)/valgrind

# ---- fuzzing ---------------------------------------------------------------
# libFuzzer targets (suites/fuzz/fuzz_NAME.c, one per parser) built with
# clang, ASan and UBSan into $(O)/fuzz; the code under test is compiled
# again for them in $(O)/fuzz/obj.  harness/run/fuzz runs each for FUZZ_S
# seconds (FUZZ_TARGETS="note spec" selects), one at a time, from the
# committed inputs (suites/fuzz/corpus, regress) and seeds it makes from
# the fixtures and real objects of this machine; prints execs and coverage
# per target; a crash, sanitizer report, leak or timeout is copied to
# suites/fuzz/regress/NAME/ (test_fuzzreplay replays it) and fails the run.
# After a `make check`, the table joins RESULTS.md.  Not part of `all`.
FUZZ_S       ?= 60
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_O       := $(O)/fuzz
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_O)/fuzz_%)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS   = -g -O1 -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra \
	-Wno-unused-parameter -Wshadow -Wformat=2 -Wno-format-nonliteral -MMD -MP -I$(O) -iquote providers \
	-iquote harness/cli $(PKG_CFLAGS) $(FUZZ_SAN)
FUZZ_LIB_OBJS := $(PROV_SRCS:%.c=$(FUZZ_O)/obj/%.o) $(CLI_LIB_OBJS:$(O)/%=$(FUZZ_O)/obj/%)

$(FUZZ_O)/obj/%.o: %.c $(SKELS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_DEFS) -c $< -o $@

$(FUZZ_O)/obj/suites/fuzz/%.o: FUZZ_DEFS = -DPC_LIBFUZZER
.SECONDARY: $(FUZZ_LIB_OBJS) $(FUZZ_SRCS:%.c=$(FUZZ_O)/obj/%.o)

$(FUZZ_O)/fuzz_%: $(FUZZ_O)/obj/suites/fuzz/fuzz_%.o $(FUZZ_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) $^ $(LDLIBS) -o $@

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS) fixtures
	$(Q)./harness/run/fuzz -t $(FUZZ_S) -o $(FUZZ_O) -f $(O)/fixtures $(FUZZ_TARGETS); st=$$?; \
	if [ -f $(RESULTS_DIR)/suites.tsv ] && [ -f $(FUZZ_O)/fuzz.tsv ]; then \
		cp $(FUZZ_O)/fuzz.tsv $(RESULTS_DIR)/fuzz.tsv && $(MAKE) --no-print-directory results || st=1; \
	fi; \
	exit $$st

# Unit tests and every suite on a sanitizer build of the tracer, its tools
# and unit tests (in $(O)-san; fixtures never take sanitizers): 0 reports
# wanted (harness/run/sanitize-run: where ASan, LSan and UBSan write, how
# they are counted).  Valgrind cannot run a sanitizer build: it is
# `make check`'s.  Like coverage, the figure joins RESULTS.md after a
# `make check`.  Exit 0 iff every test passed and no report was written.
SAN_O := $(O)-san
.PHONY: sanitize covsan
sanitize:
	$(Q)rm -rf $(SAN_O)
	$(Q)$(MAKE) --no-print-directory O=$(SAN_O) SANITIZE=address,undefined NO_INSTALL=1 all
	$(Q)./harness/run/sanitize-run $(SAN_O) $(UNITS_RUN:$(O)/%=$(SAN_O)/%) -- $(C_SUITES); st=$$?; \
	if [ -f $(RESULTS_DIR)/suites.tsv ]; then \
		cp $(SAN_O)/sanitize.txt $(RESULTS_DIR)/sanitize.txt && $(MAKE) --no-print-directory results; \
	fi; \
	exit $$st

# CI's instrumented pass: `make coverage` and `make sanitize` in one run of
# the unit tests and suites, on a build with gcov and the sanitizers
# (in $(O)-covsan): both figures, for the time of one pass of the suites
# (about six minutes on two cores).  Exit as sanitize's; the coverage
# figure is reported, not judged, as coverage's.
COVSAN_O := $(O)-covsan
covsan:
	$(Q)rm -rf $(COVSAN_O)
	$(Q)$(MAKE) --no-print-directory O=$(COVSAN_O) COVERAGE=1 SANITIZE=address,undefined NO_INSTALL=1 all
	$(Q)./harness/run/sanitize-run $(COVSAN_O) $(UNITS_RUN:$(O)/%=$(COVSAN_O)/%) -- $(C_SUITES); st=$$?; \
	set -o pipefail; \
	{ ./harness/run/coverage-report $(COVSAN_O); echo "coverage run: $$(tail -n 1 $(COVSAN_O)/run.log) (with the sanitizers)"; } \
		| tee $(COVSAN_O)/coverage.txt || st=1; \
	if [ -f $(RESULTS_DIR)/suites.tsv ]; then \
		cp $(COVSAN_O)/sanitize.txt $(RESULTS_DIR)/sanitize.txt && \
		cp $(COVSAN_O)/coverage.txt $(RESULTS_DIR)/coverage.txt && $(MAKE) --no-print-directory results; \
	fi; \
	exit $$st

# Mutation testing (harness/run/mutate): MUTANTS mutants of providers/ and the
# BPF program, picked by MUTATE_SEED (MUTATE_FILES="providers/spec.c"
# restricts), each built in a scratch copy ($(O)/mutate) and run against
# the unit tests and the suites ci/mutate-suites maps its file to, at most
# MUTATE_S seconds each; prints the score and every survivor with the
# command that reproduces it.  After a `make check`, the figures join
# RESULTS.md.  Exit 0 iff the score is at least MUTATE_MIN (95).
# MUTATE_RERUN=1: only the survivors of the last run again, on the
# current tree (after a new test or ci/mutants-equivalent entry); the
# other rows are kept and the summary says so.  About 85 min for 100
# mutants here (a survivor costs its file's whole list of suites).
MUTANTS      ?= 100
MUTATE_SEED  ?= 1
MUTATE_S     ?= 240
MUTATE_FILES ?=
.PHONY: mutate
mutate:
	$(Q)./harness/run/mutate --out $(ABS_O)/mutate --mutants $(MUTANTS) --seed $(MUTATE_SEED) \
		--budget $(MUTATE_S) $(if $(MUTATE_FILES),--files '$(MUTATE_FILES)') \
		$(if $(MUTATE_RERUN),--rerun-survivors); st=$$?; \
	if [ -f $(RESULTS_DIR)/suites.tsv ] && [ -f $(O)/mutate/summary.txt ]; then \
		cp $(O)/mutate/mutants.tsv $(RESULTS_DIR)/mutate.tsv && \
		cp $(O)/mutate/summary.txt $(RESULTS_DIR)/mutate.txt && \
		$(MAKE) --no-print-directory results || st=1; \
	fi; \
	exit $$st

# CI's held-out mutation sample (issue 29): HELDOUT_MUTANTS mutants drawn
# by a seed derived from the commit, so that no test was written against
# the draw; RESULTS.md shows its score and survivors beside the seeded
# one.  Its score informs, it does not fail the run (a draw of ten says
# little alone; its survivors are the work it finds): exit 1 only when
# the sample could not be run (the unmutated copy fails, a bad usage).
HELDOUT_MUTANTS ?= 10
HELDOUT_S       ?= 150
# Which public functions of providers/ can fail and which failure-injection
# test runs each (harness/run/injection-map; a gcov build in $(O)-inj):
# exit 1 on a function no test injects that ci/injection-exempt does not
# list with its reason.
.PHONY: injection
injection:
	$(Q)./harness/run/injection-map --build $(ABS_O)-inj --out $(ABS_O)-inj/injection.tsv

HELDOUT_SEED    ?= heldout-$(shell git rev-parse --short=12 HEAD 2>/dev/null || echo none)
.PHONY: mutate-heldout
mutate-heldout:
	$(Q)./harness/run/mutate --out $(ABS_O)/mutate-heldout --mutants $(HELDOUT_MUTANTS) \
		--seed $(HELDOUT_SEED) --budget $(HELDOUT_S); st=$$?; \
	if [ -f $(RESULTS_DIR)/suites.tsv ] && [ -f $(O)/mutate-heldout/summary.txt ]; then \
		cp $(O)/mutate-heldout/mutants.tsv $(RESULTS_DIR)/mutate-heldout.tsv && \
		cp $(O)/mutate-heldout/summary.txt $(RESULTS_DIR)/mutate-heldout.txt && \
		$(MAKE) --no-print-directory results || st=2; \
	fi; \
	[ $$st -le 1 ] || exit 1

# The suites on every kernel of ci/kernels (KERNELS="name spec ..." selects
# or adds; MATRIX_SUITES="a,b" restricts the suites), then RESULTS.md: the
# host's last `make check` results when there are any, else the matrix's
# own host run, followed by every matrix in $(O)/matrix* (MATRIX_DIR names
# this run's: several runs with different suites each get a section).
# MATRIX_TIMEOUT: each guest's limit in seconds (matrix -t; default its
# own): CI sets what is left of its budget, so that a slow guest ends as
# INFRA with the suites it finished, reported, instead of a killed step.
MATRIX_DIR ?= $(O)/matrix
MATRIX_JOBS ?= $(shell nproc)
MATRIX_GUEST_JOBS ?= 1
MATRIX_TIMEOUT ?=
matrix: all
	$(Q)PROBECHECK_BUILD=$(ABS_O) ./harness/kernels/matrix -j $(MATRIX_JOBS) -J $(MATRIX_GUEST_JOBS) \
		$(if $(MATRIX_TIMEOUT),-t $(MATRIX_TIMEOUT)) -o $(MATRIX_DIR); st=$$?; \
	r=$(RESULTS_DIR); w=$$(cat $$r/wall_s 2>/dev/null); \
	if [ ! -f $$r/suites.tsv ]; then r=$(MATRIX_DIR)/host/results/r1/all; w=$$(cat $(MATRIX_DIR)/host/wall_s 2>/dev/null); fi; \
	if [ ! -f $$r/suites.tsv ]; then \
		echo "probecheck: RESULTS.md not rewritten: no host results (make check, or a matrix with host)"; \
	elif [ -f $(MATRIX_DIR)/kernels.tsv ]; then \
		{ $(call results_md,$$r,$${w:-0}); } || st=1; \
		$(call report_html,$$r,$${w:-0}) || st=1; \
	fi; \
	exit $$st

# The tracing-behaviour suites (ci/conformance-suites) against each tracer
# of TRACERS through its adapter (harness/tracers/NAME), or PC_TRACER for
# one; then RESULTS.md with the Tracers section when make check's results
# are there.  Exit 0 when every tracer ran and probecheck passed all it
# claims: other tracers' failures are the results.
TRACERS ?= $(or $(PC_TRACER),probecheck bpftrace bcc perf libbpf)
CONFORMANCE_DIR ?= $(O)/conformance
.PHONY: conformance
conformance: all
	$(Q)PROBECHECK_BUILD=$(ABS_O) ./harness/run/conformance $(CONFORMANCE_DIR) $(TRACERS); st=$$?; \
	if [ -f $(RESULTS_DIR)/suites.tsv ]; then $(MAKE) --no-print-directory results || st=1; \
	else echo "probecheck: RESULTS.md not rewritten (no make check results): see $(CONFORMANCE_DIR)/tracers.md"; fi; \
	exit $$st

# A benchmark, not a test (harness/run/bench): cost per hit as a ratio to
# a system call, attach and detach per site, events per second, per attach
# path and site kind, and for the other tracers; into $(O)/bench/host.
# BENCH_KERNELS="NAME ..." (of ci/kernels, or specs) also in guests
# (harness/kernels/bench-kernels: quick, ratios only under TCG) into
# $(O)/bench/NAME.  RESULTS.md gets the Cost section from every kernel's
# last bench in $(O)/bench (`make results`, so a later check keeps it).
BENCH_KERNELS ?=
.PHONY: bench
bench: all
	$(Q)PROBECHECK_BUILD=$(ABS_O) ./harness/run/bench -o $(O)/bench/host; st=$$?; \
	if [ -n "$(BENCH_KERNELS)" ]; then \
		PROBECHECK_BUILD=$(ABS_O) ./harness/kernels/bench-kernels -o $(O)/bench $(BENCH_KERNELS) || st=1; \
	fi; \
	if [ -f $(RESULTS_DIR)/suites.tsv ]; then $(MAKE) --no-print-directory results || st=1; fi; \
	exit $$st

# Fault injection: SOAK_N iterations per attach mode (make check runs a
# sample of 5 per mode inside suites/faults.bats).
SOAK_N ?= 200
soak: all
	$(Q)PROBECHECK_BUILD=$(ABS_O) ./harness/run/soak -n $(SOAK_N)

# The flake budget: the suites FLAKE_N times in a row on this kernel (all,
# or SUITES=), then every test whose outcome changed between runs.
FLAKE_N ?= 20
flake: all
	$(Q)PROBECHECK_BUILD=$(ABS_O) ./harness/run/flake $(FLAKE_N) $(O)/flake $(SUITES)

# bisect-kernels and bisect-git must find planted regressions (synthetic
# kernels and a scratch repository: no VM, no uprobe, no build of ours).
.PHONY: bisect-selftest
bisect-selftest:
	$(Q)./harness/kernels/bisect-selftest

clean:
	$(call msg,CLEAN,$(O))
	$(Q)rm -rf $(O) $(O)-cov $(O)-san

help:
	@echo 'probecheck targets:'
	@echo '  all          build $(O)/probecheck, tools, fixtures, unit tests'
	@echo '  check        deps + build + unit tests + all suites on this kernel; writes RESULTS.md; kernel findings last'
	@echo '  results      RESULTS.md and $(O)/report/index.html again from the last check (and coverage, matrix) results'
	@echo '  check-unit   C unit tests only'
	@echo '  check-suites bats suites only (SUITES="suites/x.bats" to select)'
	@echo '  coverage     gcov build, run everything, line coverage of providers/ and harness/; into RESULTS.md'
	@echo '  valgrind     list and trace under memcheck: 0 errors, 0 bytes definitely lost'
	@echo '  fuzz         libFuzzer targets (clang, ASan+UBSan), FUZZ_S (60) s each, FUZZ_TARGETS="note spec" selects; into RESULTS.md'
	@echo '  sanitize     unit tests and the C_SUITES on an ASan+UBSan build ($(O)-san): 0 reports; into RESULTS.md'
	@echo '  covsan       coverage and sanitize in one pass (gcov + ASan+UBSan build, $(O)-covsan), as CI runs them; into RESULTS.md'
	@echo '  mutate-heldout  CI'"'"'s held-out sample: HELDOUT_MUTANTS (10) mutants, seed from the commit; into RESULTS.md'
	@echo '  injection    which public functions of providers/ can fail, and which injection test runs each'
	@echo '  mutate       mutation testing of providers/: MUTANTS (100) mutants, unit tests + mapped suites, MUTATE_S (240) s each; score, survivors; into RESULTS.md'
	@echo '  matrix       the suites on every kernel of ci/kernels (qemu guests); RESULTS.md'
	@echo '  bench        cost per hit (x syscall), attach/detach per site, events/s, per path and kind; BENCH_KERNELS= in guests'
	@echo '  conformance  the tracing suites against TRACERS="probecheck bpftrace bcc perf libbpf" (or PC_TRACER=; CONFORMANCE_SUITES, CONFORMANCE_OTHERS_SUITES: the suites of all, of all but probecheck); RESULTS.md'
	@echo '  soak         fault injection, SOAK_N (200) iterations per attach mode, 0 leaks'
	@echo '  flake        the suites FLAKE_N (20) times; lists every test whose outcome changed'
	@echo '  bisect-selftest  bisect-kernels and bisect-git find planted regressions'
	@echo '  clean        remove $(O) and $(O)-cov'
	@echo 'variables: O=dir V=1 COVERAGE=1 SANITIZE=address,undefined SUITES=... FUZZ_S=... FUZZ_TARGETS=...'
	@echo '           make mutate: MUTANTS=... MUTATE_SEED=... MUTATE_S=... MUTATE_FILES=glob MUTATE_MIN=... MUTATE_RERUN=1'

-include $(shell find $(O) -type f -name '*.d' 2>/dev/null)
