# dtc — build, data, run, test, grade, bench.
# Everything lands under build/:
#   build/lessons/NN_name     a lesson built with the student's exercise file
#   build/solutions/NN_name   the same lesson built with the reference solution
#   build/tools/              data generator and importer
#   build/tests/unit_tests    the Criterion suite
# `make CUDA=1 ...` builds the CUDA variant of all of it under build/cuda/ (see "CUDA" below).
.DEFAULT_GOAL := all
SHELL := /bin/bash

CC      ?= cc
ARCH    ?= native
CFLAGS  ?= -O3 -march=$(ARCH)
# -fno-trapping-math and -fno-math-errno let gcc vectorise floor, int conversion and sqrt;
# neither changes a single result (no -ffast-math: runs repeat bit for bit).
# CFLAGS is yours to override (make CFLAGS="-O2 -g"); the flags below always apply.
DTC_CFLAGS := -std=c11 -Wall -Wextra -Werror -fno-trapping-math -fno-math-errno
DTC_CFLAGS += -D_POSIX_C_SOURCE=200809L -Icommon -MMD -MP
BLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
MPI_CFLAGS  := $(shell pkg-config --cflags mpich 2>/dev/null)
MPI_LIBS    := $(shell pkg-config --libs mpich 2>/dev/null || echo -lmpich)
DTC_CFLAGS += $(BLAS_CFLAGS) $(MPI_CFLAGS)
LDLIBS  := $(MPI_LIBS) $(BLAS_LIBS) -lm

BUILD   := build

# `make SANITIZE=1 ...` builds the same programs under build/sanitize/ with AddressSanitizer
# and UndefinedBehaviorSanitizer: `make grade` runs the student's lesson that way too.
SANITIZE ?= 0
SANITIZE_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
ifeq ($(SANITIZE),1)
BUILD  := build/sanitize
CFLAGS := $(SANITIZE_FLAGS) -march=$(ARCH)
endif

# `make FUZZ=1 ...` builds under build/fuzz/ with clang, libFuzzer's coverage and the same
# sanitizers: `make fuzz` builds the fuzzers (tests/fuzz/) that way and runs them. They are
# built for one x86-64 level, not this machine's: the same code on every machine, so the gate's
# fixed exploration (make fuzz-gate) takes the same paths everywhere.
FUZZ ?= 0
ifeq ($(FUZZ),1)
BUILD  := build/fuzz
CC     := clang
CFLAGS := $(SANITIZE_FLAGS) -fsanitize=fuzzer-no-link -march=x86-64-v2
endif

# ---------------------------------------------------------------- CUDA
# The CPU build is the default on every machine; nothing is auto-detected. `make CUDA=1`
# adds the GPU device (common/cuda/: kernels + cuBLAS) and the NCCL communicator to the same
# programs, built under build/cuda/, and `--device cuda` picks the GPU at run time. It needs
# only the CUDA toolkit to build; a GPU only to run.
CUDA ?= 0
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
# sm_80 (A100), sm_90 (H100/H200) as machine code, plus PTX of the newest for later GPUs.
CUDA_ARCHS ?= 80 90
NVCC_ARCH_FLAGS := $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
                   -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
NVCC_FLAGS := -std=c++17 -O3 $(NVCC_ARCH_FLAGS) -Icommon -Icommon/cuda -MMD -MP \
              -Xcompiler -Wall,-Wextra,-Werror
ifeq ($(CUDA),1)
BUILD := build/cuda
DTC_CFLAGS += -DDTC_CUDA -Icommon/cuda -I$(CUDA_HOME)/include
# make test-emu links the emulated GPU's objects (EMU_LINK_OBJ) instead, and the library
# again after them, for what they share with it (the 16-bit sums, common/sum16.c)
CUDA_LIBS ?= -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lnccl -lcudart
LDLIBS := $(CUDA_LIBS) $(LDLIBS) -lstdc++
endif
# `make V=1` shows the full compiler commands.
Q := $(if $(V),,@)
COMMON_SRC := $(wildcard common/*.c)
ifeq ($(CUDA),1)
COMMON_SRC += $(wildcard common/cuda/*.c) $(wildcard common/cuda/*.cu)
endif
COMMON_OBJ := $(patsubst %.cu,$(BUILD)/obj/%.o,$(COMMON_SRC:%.c=$(BUILD)/obj/%.o))
LIB        := $(BUILD)/libdtc.a

LESSONS := $(notdir $(wildcard lessons/[0-9][0-9]_*))
STUDENT_BINS  := $(LESSONS:%=$(BUILD)/lessons/%)
# A course handed out without its references (no solutions/NN_name/) builds no reference:
# build/solutions/NN_name would be the student's own program under the reference's name.
REFERENCES := $(foreach lesson,$(LESSONS),$(if $(wildcard solutions/$(lesson)/*.c),$(lesson)))
SOLUTION_BINS := $(REFERENCES:%=$(BUILD)/solutions/%)
# A lesson that builds on an earlier reference this copy of the course lacks cannot be built:
# its given code calls that reference's parts (its *_parts.h), which the student's own file
# does not export.
missing_parts = $(strip $(foreach f,$(shell cat lessons/$(1)/builds_on 2>/dev/null),$(if $(wildcard solutions/$(f)),,solutions/$(f))))
missing_parts_text = it builds on $(call missing_parts,$(1)) (the reference's parts), which this copy of the course lacks: a copy handed out needs at least $(sort $(dir $(call missing_parts,$(1))))
WITHOUT_PARTS := $(foreach lesson,$(LESSONS),$(if $(call missing_parts,$(lesson)),$(lesson)))
TOOLS := $(BUILD)/tools/gen_reviews $(BUILD)/tools/import_tokens $(BUILD)/tools/compare_runs \
         $(BUILD)/tools/check_schedule $(BUILD)/tools/analyze_traces $(BUILD)/tools/cpu_kernels
ifeq ($(CUDA),1)
TOOLS += $(BUILD)/tools/doctor
endif

TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(BUILD)/tests/unit_tests
TEST_PROGRAMS := $(BUILD)/tests/comm_check $(BUILD)/tests/fake_openblas_pick.so $(BUILD)/tests/slow_rank.so

all: $(filter-out $(WITHOUT_PARTS:%=$(BUILD)/lessons/%),$(STUDENT_BINS)) $(SOLUTION_BINS) $(TOOLS)
	@$(foreach lesson,$(WITHOUT_PARTS),echo "make: $(lesson) not built: $(call missing_parts_text,$(lesson))" >&2;)

# Objects every program links (their link rules take $^): the emulated GPU in make test-emu.
EMU_LINK_OBJ ?=
ifneq ($(EMU_LINK_OBJ),)
$(STUDENT_BINS) $(SOLUTION_BINS) $(TOOLS) $(BUILD)/tests/gpu_tests: $(EMU_LINK_OBJ)
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC    $<")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $(STUDENT_CFLAGS) $(LESSON_INCLUDE) -c $< -o $@ $(SAVE_DIAGNOSTICS)

# What you compile in lessons/ warns without failing (an unused variable halfway through an
# edit must not stop a grade), and what the compiler said is kept beside the object
# (OBJECT.log) for make grade to show. STRICT=1 (CI, the reference) makes warnings errors.
# QUIET_WARNINGS=1 shows only what stops the build: make grade's second build of a lesson
# (sanitizers, or CUDA) compiles the same file, whose warnings the first build showed.
STRICT ?= 0
$(BUILD)/obj/lessons/%.o: STUDENT_CFLAGS = $(if $(filter 1,$(STRICT)),,-Wno-error)
$(BUILD)/obj/lessons/%.o: SAVE_DIAGNOSTICS = 2>$@.log; status=$$?; \
    $(if $(filter 1,$(QUIET_WARNINGS)),[ $$status -eq 0 ] || )cat $@.log >&2; exit $$status
# An object the compiler warned about (its log not empty) was compiled without STRICT, or it
# would not exist: with STRICT=1 it and its lesson's program are made again (the object alone
# would not be: make does not remake a missing object of a program newer than its sources),
# so that the warning stops the build.
ifeq ($(STRICT),1)
warned_objects := $(patsubst %.log,%,$(shell find $(BUILD)/obj/lessons -name '*.o.log' -size +0 2>/dev/null))
$(if $(warned_objects),$(shell rm -f $(warned_objects) \
    $(foreach o,$(warned_objects),$(BUILD)/lessons/$(notdir $(patsubst %/,%,$(dir $(o)))))))
endif

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC  $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) -c $< -o $@

$(LIB): $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(AR) rcs $@ $^

# A lesson is every .c file in its folder; the solution build swaps in the files of the
# same name from solutions/. A lesson that builds on an earlier one names the earlier
# files it links, as NN_name/file.c lines in its `builds_on` file; both builds link the
# reference version of an exercise file, and a given file as it is.
builds_on    = $(foreach f,$(shell cat lessons/$(1)/builds_on 2>/dev/null),$(if $(wildcard solutions/$(f)),solutions/$(f),lessons/$(f)))
lesson_src   = $(wildcard lessons/$(1)/*.c) $(call builds_on,$(1))
solution_src = $(foreach f,$(wildcard lessons/$(1)/*.c),$(if $(wildcard solutions/$(1)/$(notdir $(f))),solutions/$(1)/$(notdir $(f)),$(f))) $(call builds_on,$(1))
# Headers live beside the student files, the earlier lessons' too; an earlier lesson's
# reference may add a header of its own for the lessons that build on it (beside it in
# solutions/: solutions/07_zero1/zero1_parts.h).
lesson_includes = -Ilessons/$(1) $(sort $(foreach f,$(call builds_on,$(1)),-I$(patsubst solutions/%,lessons/%,$(patsubst %/,%,$(dir $(f)))) \
                  $(if $(filter solutions/%,$(f)),-I$(patsubst %/,%,$(dir $(f))))))
object_lesson   = $(notdir $(patsubst %/,%,$(dir $(1))))

lesson_objs   = $(patsubst %.c,$(BUILD)/obj/%.o,$(call lesson_src,$(1)))
solution_objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(call solution_src,$(1)))

# Keep object files: they are reused by the next build.
.SECONDARY:
.SECONDEXPANSION:
$(BUILD)/lessons/%: $$(if $$(filter $$*,$$(WITHOUT_PARTS)),,$$(call lesson_objs,$$*) $(LIB))
	@$(if $(filter $*,$(WITHOUT_PARTS)),echo "make: $@ cannot be built: $(call missing_parts_text,$*)" >&2; exit 2)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/solutions/%: $$(if $$(filter $$*,$$(REFERENCES)),$$(call solution_objs,$$*) $(LIB))
	@$(if $(filter $*,$(REFERENCES)),,echo "make: no reference solution of $* in this copy of the course (solutions/$*/ is missing): build/lessons/$* is yours" >&2; exit 2)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/obj/solutions/%.o: LESSON_INCLUDE = $(call lesson_includes,$(call object_lesson,$@))
$(BUILD)/obj/lessons/%.o: LESSON_INCLUDE = $(call lesson_includes,$(call object_lesson,$@))

$(BUILD)/tools/%: $(BUILD)/obj/data/%.o $(BUILD)/obj/data/yelp_csv.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tools/compare_runs $(BUILD)/tools/check_schedule: $(BUILD)/tools/%: $(BUILD)/obj/grader/%.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS)

# analyze_traces reads JSON with cJSON (libcjson-dev): any valid formatting of a trace
$(BUILD)/tools/analyze_traces: $(BUILD)/obj/tools/analyze_traces.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS) -lcjson

$(BUILD)/tools/doctor $(BUILD)/tools/cpu_kernels: $(BUILD)/tools/%: $(BUILD)/obj/tools/%.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS)

# The GPU half of the tests (CUDA build only): each test skips, saying why, without a GPU.
GPU_TEST_SRC := $(wildcard tests/gpu/*.c)
GPU_TEST_BIN := $(BUILD)/tests/gpu_tests
$(BUILD)/obj/tests/gpu/%.o: LESSON_INCLUDE = -Itests/gpu
$(GPU_TEST_BIN): $(GPU_TEST_SRC:%.c=$(BUILD)/obj/%.o) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS) -lcriterion

$(BUILD)/tests/comm_check: $(BUILD)/obj/tests/comm_check.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS)

# Preloaded by the tests (test_blas_kernels.c, test_lessons_dp.c): a library that stands in
# for another, or wraps a call, is not built with the program's flags (nor its sanitizers).
$(BUILD)/tests/fake_openblas_pick.so $(BUILD)/tests/slow_rank.so: $(BUILD)/tests/%.so: tests/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC    $@")
	$(Q)$(CC) -O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L $(BLAS_CFLAGS) -shared -fPIC $< -o $@

# Lesson code the unit tests call: lesson 05's bucket plan (its reference solution).
TEST_LESSON_OBJ := $(BUILD)/obj/solutions/05_bucketed_ddp/bucketed_ddp.o
$(BUILD)/obj/tests/%.o: LESSON_INCLUDE = -Ilessons/05_bucketed_ddp

$(TEST_BIN): $(TEST_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/data/yelp_csv.o $(TEST_LESSON_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) $^ -o $@ $(LDLIBS) -lcriterion

# Lessons' reference builds with one deliberate mistake each (tests/mutants/), which the
# grading tests must see fail, and correct ones written another way (tests/variants/) or
# designed another way (tests/designs/), which they must see pass.
MUTANTS_STAMP := $(BUILD)/mutants/.built
$(MUTANTS_STAMP): $(wildcard tests/mutants/*.txt tests/variants/*.txt tests/designs/*/*.c) tests/build_mutants.sh $(SOLUTION_BINS) $(LIB)
	@$(if $(Q),echo "  MUTANTS")
	$(Q)CC="$(CC)" CFLAGS_ALL="$(CFLAGS) $(DTC_CFLAGS)" LDLIBS="$(LDLIBS)" BUILD="$(BUILD)" SANITIZE="$(SANITIZE)" \
	    tests/build_mutants.sh
	@touch $@

# Groups of programs by lesson (BUILT: the lessons, all by default), named so that make says
# nothing about those already built. `make SANITIZE=1 sanitized` is what the tests grade
# under the sanitizers beside the plain build.
BUILT ?= $(LESSONS)
built-lessons: $(BUILT:%=$(BUILD)/lessons/%)
sanitized: $(STUDENT_BINS) $(SOLUTION_BINS) $(MUTANTS_STAMP)

print-solution-objs:
	@echo $(call solution_objs,$(LESSON))

print-lesson-includes:
	@echo $(call lesson_includes,$(LESSON))

# ---------------------------------------------------------------- data
DATA_DIR := data/generated
COURSE_DATA := $(DATA_DIR)/train.bin $(DATA_DIR)/val.bin

ifeq ($(CUDA),1)
# The data is the same for every device: the CPU build's tools make it.
data:
	@$(MAKE) --no-print-directory CUDA=0 data
else

# The corpus: Jane Austen's novels (data/austen_text.sh; docs/data.md), or with
# YELP=DIR the Yelp Review Full CSVs DIR/train.csv and DIR/test.csv. $(DATA_DIR)/corpus
# names the one the shards hold; it is rewritten as make reads this file, only when the
# corpus changes, so that switching remakes the shards. (A rule could not do it: every
# target here is secondary, and make skips a missing secondary file.)
CORPUS := $(if $(YELP),yelp $(abspath $(YELP)),austen)
CORPUS_FILE := $(DATA_DIR)/corpus
$(shell mkdir -p $(DATA_DIR) && { echo '$(CORPUS)' | cmp -s - $(CORPUS_FILE) || echo '$(CORPUS)' > $(CORPUS_FILE); } 2>/dev/null)

$(DATA_DIR)/austen_train.txt: data/austen_text.sh
	@mkdir -p $(DATA_DIR)
	data/austen_text.sh $(DATA_DIR)

$(DATA_DIR)/austen_val.txt: $(DATA_DIR)/austen_train.txt

ifeq ($(YELP),)
$(DATA_DIR)/train.bin: $(DATA_DIR)/austen_train.txt $(CORPUS_FILE) $(BUILD)/tools/import_tokens
	$(BUILD)/tools/import_tokens --format text $< $@

$(DATA_DIR)/val.bin: $(DATA_DIR)/austen_val.txt $(CORPUS_FILE) $(BUILD)/tools/import_tokens
	$(BUILD)/tools/import_tokens --format text $< $@
else
$(DATA_DIR)/train.bin: $(YELP)/train.csv $(CORPUS_FILE) $(BUILD)/tools/import_tokens
	$(BUILD)/tools/import_tokens --format yelp $< $@

$(DATA_DIR)/val.bin: $(YELP)/test.csv $(CORPUS_FILE) $(BUILD)/tools/import_tokens
	$(BUILD)/tools/import_tokens --format yelp $< $@
endif

# make data GPT2=1: also the same text in GPT-2's tokens, and llm.c's tokenizer file for
# the end-of-run sample (data/gpt2_tokens.py; scripts/setup_gpt2.sh fetches tiktoken and
# GPT-2's encoding from PyPI into $(BUILD)/gpt2/ once).
GPT2_DATA := $(DATA_DIR)/gpt2_train.bin $(DATA_DIR)/gpt2_val.bin $(DATA_DIR)/gpt2_tokenizer.bin
$(BUILD)/gpt2/gpt2.tiktoken: scripts/setup_gpt2.sh
	@scripts/setup_gpt2.sh $(BUILD)/gpt2
	@touch $@

$(DATA_DIR)/gpt2_train.bin: data/gpt2_tokens.py $(DATA_DIR)/austen_train.txt $(DATA_DIR)/austen_val.txt \
                            $(BUILD)/gpt2/gpt2.tiktoken
	$(BUILD)/gpt2/venv/bin/python data/gpt2_tokens.py $(BUILD)/gpt2/gpt2.tiktoken $(DATA_DIR) \
	    $(DATA_DIR)/austen_train.txt $(DATA_DIR)/austen_val.txt

$(DATA_DIR)/gpt2_val.bin $(DATA_DIR)/gpt2_tokenizer.bin: $(DATA_DIR)/gpt2_train.bin

# The graded runs' text (--config reference): the synthetic reviews (docs/grading.md says why).
REVIEWS_DATA := $(DATA_DIR)/reviews_train.bin $(DATA_DIR)/reviews_val.bin
$(DATA_DIR)/reviews/train.csv: $(BUILD)/tools/gen_reviews
	$(BUILD)/tools/gen_reviews --out-dir $(DATA_DIR)/reviews

$(DATA_DIR)/reviews/test.csv: $(DATA_DIR)/reviews/train.csv

$(DATA_DIR)/reviews_train.bin: $(DATA_DIR)/reviews/train.csv $(BUILD)/tools/import_tokens
	$(BUILD)/tools/import_tokens --format yelp $< $@

$(DATA_DIR)/reviews_val.bin: $(DATA_DIR)/reviews/test.csv $(BUILD)/tools/import_tokens
	$(BUILD)/tools/import_tokens --format yelp $< $@

data: $(COURSE_DATA) $(REVIEWS_DATA) $(if $(GPT2),$(GPT2_DATA))
endif

# ---------------------------------------------------------------- top-level jobs
setup:
	@scripts/setup.sh

# PyPI's PyTorch in build/torch (scripts/setup_torch.sh; about 5.5 GB): the PyTorch that runs
# FSDP beside lessons 08 and 09 in make run and make bench. Nothing else needs it.
torch:
	@scripts/setup_torch.sh

# make run CLUSTER="1 10" (root) also runs the lessons across two hosts linked at those rates.
run: setup
	@$(MAKE) --no-print-directory all data
	@scripts/run_course.sh $(if $(CLUSTER),--cluster "$(CLUSTER)")

ifeq ($(CUDA),1)
test:
	@echo "make: 'make test' is the CPU suite: run it without CUDA=1 ('make test-gpu' runs the GPU part)" >&2
	@exit 2
else
test: setup
	@$(MAKE) --no-print-directory GPT2=1 all data $(TEST_BIN) $(TEST_PROGRAMS) $(MUTANTS_STAMP)
	@$(MAKE) --no-print-directory SANITIZE=1 sanitized
	@scripts/run_tests.sh
endif

# The CUDA build and its tests: on a machine without a GPU every GPU test reports that it
# was skipped and why, and the rest (the build itself, doctor's no-GPU answer) still counts.
# The tests compare against the CPU build's lesson 00, so that is built too.
test-gpu: setup
	@$(MAKE) --no-print-directory CUDA=0 all data
	@$(MAKE) --no-print-directory CUDA=1 all build/cuda/tests/gpu_tests
	@scripts/run_gpu_tests.sh

# The same tests on a CPU emulation of the CUDA runtime, cuBLAS and NCCL (tests/emu/, see
# docs/gpu.md): the CUDA build's own code, built again under build/emu/ with kernels
# compiled by g++ and linked against the emulation, with two emulated GPUs so that NCCL
# runs at 2 ranks. It checks the GPU code's logic on any machine; it measures nothing.
EMU_BUILD := build/emu
EMU_OBJ := $(patsubst tests/emu/%,$(EMU_BUILD)/emu/%.o,$(basename $(wildcard tests/emu/*.c tests/emu/*.cpp)))
$(EMU_BUILD)/emu/%.o: tests/emu/%.c tests/emu/emu.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC    $<")
	$(Q)$(CC) $(CFLAGS) $(DTC_CFLAGS) -D_DEFAULT_SOURCE -I$(CUDA_HOME)/include -c $< -o $@
$(EMU_BUILD)/emu/%.o: tests/emu/%.cpp tests/emu/include/cuda_runtime.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CXX   $<")
	$(Q)$(CXX) -std=c++20 -O2 -Wall -Wextra -Werror -Itests/emu/include -c $< -o $@

# the .cu objects of the emulated build also depend on how they are compiled
$(patsubst %.cu,$(EMU_BUILD)/obj/%.o,$(wildcard common/cuda/*.cu)): tests/emu/nvcc_emu.sh tests/emu/rewrite_launches.py \
    $(wildcard tests/emu/include/*.h)

test-emu: setup
	@$(MAKE) --no-print-directory CUDA=0 all data $(EMU_OBJ)
	@$(MAKE) --no-print-directory CUDA=1 BUILD=$(EMU_BUILD) NVCC=tests/emu/nvcc_emu.sh \
	    CUDA_LIBS=$(EMU_BUILD)/libdtc.a EMU_LINK_OBJ="$(EMU_OBJ)" all $(EMU_BUILD)/tests/gpu_tests
	@DTC_GPU_BUILD=$(EMU_BUILD) DTC_EMU_GPUS=2 GPU_TEST_JOBS=2 scripts/run_gpu_tests.sh
	@echo "make test-emu: the lessons and traces over NCCL again, each stream but compute running its work at once"
	@DTC_GPU_BUILD=$(EMU_BUILD) DTC_EMU_GPUS=2 DTC_EMU_SCHEDULE=others-first GPU_TEST_JOBS=2 scripts/run_gpu_tests.sh \
	    --filter 'gpu_lessons/@(lessons|traces)_over_nccl*'

# The memory and undefined-behaviour checks (scripts/check.sh): the in-process test suites
# under ASan + UBSan, and valgrind's memcheck on lesson 00 and lesson 05 at 2 ranks, built
# for x86-64-v3 under build/valgrind/ (valgrind runs no AVX-512); the layers of common/; and
# shellcheck on the shell scripts.
VALGRIND_CFLAGS := -O1 -g -march=x86-64-v3
check: setup
	@$(MAKE) --no-print-directory all data
	@$(MAKE) --no-print-directory SANITIZE=1 build/sanitize/tests/unit_tests
	@$(MAKE) --no-print-directory BUILD=build/valgrind CFLAGS="$(VALGRIND_CFLAGS)" \
	    build/valgrind/solutions/00_single_device build/valgrind/solutions/05_bucketed_ddp
	@scripts/check.sh

# The readers of every file a user hands the course, fuzzed (tests/fuzz/, scripts/fuzz.sh):
# every input under tests/fuzz/regressions/ (what an earlier run found) and tests/fuzz/seeds/
# replayed, then FUZZ_SECONDS each (default 20) of exploration from a random seed. fuzz-gate
# (CI) explores a fixed number of inputs from a fixed seed instead: same tree, same result.
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(BUILD)/obj/data/yelp_csv.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK  $@")
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS) -lcjson
fuzzers: $(FUZZ_BINS)

fuzz fuzz-gate: setup
	@$(MAKE) --no-print-directory data
	@$(MAKE) --no-print-directory FUZZ=1 fuzzers
	@scripts/fuzz.sh $(if $(filter fuzz-gate,$@),--gate)

# make grade LESSON=NN builds only that lesson (with the student's file, and again with the
# sanitizers): an unfinished exercise of another lesson does not stop it.
LESSON ?=
CHECK ?=
JSON ?=
# DEVICE=cuda: the lessons' training runs on the GPU, from the CUDA build (no sanitizer build)
DEVICE ?= cpu
GRADE_ON_GPU := $(filter cuda,$(DEVICE))
GRADED := $(if $(LESSON),$(filter $(LESSON)_%,$(LESSONS)),$(LESSONS))
# make hint LESSON=NN: that lesson's next hint, one at a time (scripts/hint.sh); TIER=K shows
# hint K again, RESET=1 forgets which were seen.
TIER ?=
RESET ?=
hint:
	@scripts/hint.sh "$(LESSON)" $(if $(filter 1,$(RESET)),--reset) $(if $(TIER),--tier $(TIER))

grade: setup
	@$(if $(GRADED),,echo "make grade: no lesson numbered '$(LESSON)' (LESSON=00 .. $(lastword $(LESSONS)))" >&2; exit 2)
	@$(if $(filter-out cpu cuda,$(DEVICE)),echo "make grade: DEVICE=$(DEVICE) is not cpu or cuda" >&2; exit 2)
	@$(MAKE) --no-print-directory data grading-tools
	@# a lesson that does not compile is graded as such (grade.sh reads the compiler's words):
	@# no older build of it is left to be graded in its place
	@for lesson in $(GRADED); do \
	    $(MAKE) --no-print-directory BUILT=$$lesson built-lessons && \
	    $(MAKE) --no-print-directory $(if $(GRADE_ON_GPU),CUDA=1,SANITIZE=1) QUIET_WARNINGS=1 BUILT=$$lesson built-lessons || \
	    rm -f build/lessons/$$lesson build/sanitize/lessons/$$lesson build/cuda/lessons/$$lesson; \
	done
	@CHECK="$(CHECK)" scripts/grade.sh $(LESSON) $(if $(JSON),--json $(JSON)) $(if $(GRADE_ON_GPU),--build build/cuda --device cuda)

# make grade-class SUBMISSIONS=DIR [LESSON=00,02] [OUT=DIR] [JOBS=N]: a whole class, each
# submission built and run in the sandbox, into one gradebook (scripts/grade_class.sh); JOBS
# submissions at a time (default: one per core).
SUBMISSIONS ?=
OUT ?= grades
grade-class: setup
	@$(if $(SUBMISSIONS),,echo "make grade-class: name the folder of submissions: SUBMISSIONS=DIR" >&2; exit 2)
	@scripts/grade_class.sh "$(SUBMISSIONS)" --out "$(OUT)" $(if $(LESSON),--lessons $(LESSON)) $(if $(JOBS),--jobs $(JOBS))

bench: setup
	@$(MAKE) --no-print-directory all data
	@scripts/bench.sh
	@if nvidia-smi -L > /dev/null 2>&1; then $(MAKE) --no-print-directory CUDA=1 all && scripts/bench_gpu.sh; fi

clean:
	rm -rf $(BUILD)

grading-tools: $(BUILD)/tools/compare_runs $(BUILD)/tools/check_schedule

.PHONY: built-lessons sanitized grading-tools all data setup torch run test test-gpu test-emu grade grade-class hint bench clean fuzz fuzz-gate fuzzers check print-solution-objs print-lesson-includes
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
