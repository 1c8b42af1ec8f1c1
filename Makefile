# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# asgst-bpf: one entry point.
#   make [all]     build/asgst-bpf and build/libasgst-agent.so
#   make deps      install what is missing (apt-get; needs root)
#   make test      deps + build + unit, fuzz and integration tests
#   make test-kernels  deps + build + the kernel matrix: Debian 12's 6.1
#                  under QEMU (TCG) and the host's kernel, one line each
#   make demo      deps + build + profile the bundled demo
#   make bench     deps + build + benchmarks (figures as ratios)
#   make install   PREFIX=/usr/local DESTDIR= (also the systemd unit, disabled)
#   make uninstall
#   make clean
# V=1 prints the commands.

BUILD		?= build
PREFIX		?= /usr/local
DESTDIR		?=
# systemd looks for units in /usr/local/lib/systemd/system as well as in
# the distribution's /usr/lib/systemd/system: $(PREFIX)/lib/systemd/system
# is found for PREFIX=/usr/local and /usr. Another PREFIX needs
# SYSTEMD_UNIT_DIR=/etc/systemd/system.
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
CC		?= cc
CLANG		?= clang
BPFTOOL		?= bpftool
JAVA_HOME	?= /usr/lib/jvm/java-17-openjdk-amd64
JAVAC		?= $(JAVA_HOME)/bin/javac
VERSION		:= 0.1.0

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

ARCH		:= x86
BTF_VMLINUX	:= /sys/kernel/btf/vmlinux

INCLUDES	:= -I$(BUILD) -Ibpf -Iagent -Iuser
WARN		:= -Wall -Wextra -Werror -Wno-missing-field-initializers
CFLAGS_BASE	:= -std=gnu11 $(WARN) -g -MMD -MP -D_GNU_SOURCE \
		   -DASGST_VERSION='"$(VERSION)"' $(INCLUDES)
CFLAGS_OPT	:= $(CFLAGS_BASE) -O2 -fno-omit-frame-pointer
SANFLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
		   -fno-omit-frame-pointer
CFLAGS_SAN	:= $(CFLAGS_BASE) -O1 $(SANFLAGS)
FUZZFLAGS	:= -fsanitize=fuzzer-no-link,address,undefined \
		   -fno-sanitize-recover=all -fno-omit-frame-pointer
LDLIBS		:= -lbpf -ldw -lelf -lz -lstdc++ -lpthread -ldl
# unit tests only: json-c parses the JSON writer's output back
TEST_LDLIBS	:= -ljson-c

# ---- sources --------------------------------------------------------------
BPF_SRCS	:= $(wildcard bpf/*.bpf.c)
BPF_OBJS	:= $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS		:= $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

# user/ is one folder per stage (docs/architecture.md); sources are found
# per folder
USER_DIRS	:= user $(patsubst %/,%,$(sort $(dir $(wildcard user/*/*.c))))
USER_SRCS	:= $(foreach d,$(USER_DIRS),$(wildcard $(d)/*.c))
LIB_SRCS	:= $(filter-out user/main.c,$(USER_SRCS))
LIB_OBJS	:= $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
SAN_OBJS	:= $(patsubst %.c,$(BUILD)/san/%.o,$(LIB_SRCS))
FUZZ_LIB_OBJS	:= $(patsubst %.c,$(BUILD)/fuzzobj/%.o,$(LIB_SRCS))
# A folder's res/ files (the HTML page) are read-only NUL-terminated
# strings res_<file name, '.' and '-' as '_'>, from one generated .incbin
# stub: plain data, so one object serves all three library flavours.
RES_FILES	:= $(foreach d,$(USER_DIRS),$(wildcard $(d)/res/*.html $(d)/res/*.css $(d)/res/*.js))
RES_OBJ		:= $(if $(RES_FILES),$(BUILD)/obj/res.o)
res_sym		= res_$(subst .,_,$(subst -,_,$(notdir $(1))))

AGENT_SRCS	:= $(wildcard agent/*.c)
AGENT_OBJS	:= $(patsubst %.c,$(BUILD)/obj/%.o,$(AGENT_SRCS))
AGENT_CFLAGS	:= -fPIC -fvisibility=hidden -I$(JAVA_HOME)/include \
		   -I$(JAVA_HOME)/include/linux

UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
UNIT_BINS	:= $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS	:= $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
BENCH_SRCS	:= $(wildcard tests/bench/bench_*.c)
BENCH_BINS	:= $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

# Test workloads: tests/workloads/*.c programs (frame pointers, no
# inlining, so the chains are known), lib*.c JNI/shared libraries, and
# *.java classes.
WL_C_SRCS	:= $(filter-out tests/workloads/lib%.c,$(wildcard tests/workloads/*.c))
WL_LIB_SRCS	:= $(wildcard tests/workloads/lib*.c)
WL_JAVA_SRCS	:= $(wildcard tests/workloads/*.java)
WL_BINS		:= $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(WL_C_SRCS))
WL_LIBS		:= $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%.so,$(WL_LIB_SRCS))
# the JNI library once more without frame pointers: without CFI either
# (nofp/, the thread anchor test), and with it (cfi/, unwound by CFI)
WL_LIBS		+= $(BUILD)/workloads/nofp/libjnichain.so \
		   $(BUILD)/workloads/cfi/libjnichain.so
WL_JAVA_STAMP	:= $(if $(WL_JAVA_SRCS),$(BUILD)/workloads/classes/.stamp)
# tests/workloads/cfi/: native programs built as distributions build them
# (-O2, no frame pointers), for unwinding by CFI
WL_CFI_BINS	:= $(patsubst tests/workloads/cfi/%.c,$(BUILD)/workloads/cfi/%,\
		     $(wildcard tests/workloads/cfi/*.c)) \
		   $(patsubst tests/workloads/cfi/%.cpp,$(BUILD)/workloads/cfi/%,\
		     $(wildcard tests/workloads/cfi/*.cpp))
WL_CFI_FLAGS	:= -O2 -Wall -Wextra -Werror
# tests/workloads/inline/: C++ built -O2 -g, functions the compiler
# inlines named by the DWARF (inlined native frames, source lines)
WL_INLINE_BINS	:= $(patsubst tests/workloads/inline/%.cpp,$(BUILD)/workloads/inline/%,\
		     $(wildcard tests/workloads/inline/*.cpp))
WL_CFLAGS	:= -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
		   -fno-optimize-sibling-calls -Wall -Wextra -Werror \
		   -I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux

# Test fixtures (ELF files the unit tests read) come from tests/fixtures.mk.
FIXTURES	:=
-include tests/fixtures.mk

# a recipe that fails leaves no half-written target behind
.DELETE_ON_ERROR:

.PHONY: all deps test demo bench install uninstall clean tests-build workloads fuzz
.DEFAULT_GOAL := all

all: $(BUILD)/asgst-bpf $(BUILD)/libasgst-agent.so

deps:
	$(Q)scripts/deps.sh

tests-build: all $(UNIT_BINS) $(FUZZ_BINS) workloads $(FIXTURES)
workloads: $(WL_BINS) $(WL_LIBS) $(WL_JAVA_STAMP) $(WL_CFI_BINS) $(WL_INLINE_BINS)
fuzz: $(FUZZ_BINS)

# deps first, in its own make, so nothing below is evaluated before the
# tools exist on a brand-new machine.
test: deps
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)BUILD=$(BUILD) tests/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all workloads
	$(Q)BUILD=$(BUILD) scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all workloads $(BENCH_BINS)
	$(Q)BUILD=$(BUILD) tests/bench/run.sh

# the same checks on each kernel of the matrix (tests/kernels/run.sh;
# KERNELS="6.1 host" by default)
.PHONY: test-kernels
test-kernels: deps
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)BUILD=$(BUILD) tests/kernels/run.sh $(KERNELS)

# long runs of what must stay bounded (SOAK_SECONDS each, default 600):
# the code map under JIT churn; record -a under process churn
.PHONY: soak
soak: deps
	$(Q)$(MAKE) --no-print-directory all workloads
	$(Q)SOAK_SECONDS=$${SOAK_SECONDS:-600} BUILD=$(BUILD) \
		tests/integration/test_codemap_churn.sh
	$(Q)SOAK_SECONDS=$${SOAK_SECONDS:-600} BUILD=$(BUILD) \
		sh tests/integration/soak_record_churn.sh

# The unit is written from its template with the binary's installed path.
# /etc/default/asgst-bpf is the unit's configuration, with credentials:
# installed 0600 only when absent (an admin's file is never replaced). The
# service is not enabled or started.
UNIT_SRC	:= dist/systemd/asgst-bpf.service
DEFAULT_SRC	:= dist/default/asgst-bpf
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/asgst-bpf \
		$(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR) $(DESTDIR)/etc/default
	install -m 0755 $(BUILD)/asgst-bpf $(DESTDIR)$(PREFIX)/bin/asgst-bpf
	install -m 0755 $(BUILD)/libasgst-agent.so \
		$(DESTDIR)$(PREFIX)/lib/asgst-bpf/libasgst-agent.so
	if [ -f docs/asgst-bpf.1 ]; then install -m 0644 docs/asgst-bpf.1 \
		$(DESTDIR)$(PREFIX)/share/man/man1/asgst-bpf.1; fi
	sed 's|@BINDIR@|$(PREFIX)/bin|g' $(UNIT_SRC) > $(BUILD)/asgst-bpf.service
	install -m 0644 $(BUILD)/asgst-bpf.service \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/asgst-bpf.service
	@f=$(DESTDIR)/etc/default/asgst-bpf; \
	if [ -e "$$f" ] || [ -L "$$f" ]; then \
		echo "keeping $$f (not replaced)"; \
		if [ -n "$$(find "$$f" -prune -perm /077)" ]; then \
			echo "warning: $$f is open to group or others: chmod 600 it (it holds the push credentials)"; \
		fi; \
	else \
		echo "install -m 0600 $(DEFAULT_SRC) $$f"; \
		install -m 0600 $(DEFAULT_SRC) "$$f"; \
	fi
	@echo "asgst-bpf.service is installed, not enabled: set ASGST_PUSH_URL in /etc/default/asgst-bpf, then systemctl enable --now asgst-bpf"

# /etc/default/asgst-bpf stays (the admin's configuration)
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/asgst-bpf \
		$(DESTDIR)$(PREFIX)/lib/asgst-bpf/libasgst-agent.so \
		$(DESTDIR)$(PREFIX)/share/man/man1/asgst-bpf.1 \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/asgst-bpf.service
	-rmdir $(DESTDIR)$(PREFIX)/lib/asgst-bpf
	@echo "kept /etc/default/asgst-bpf; stop the service first if it runs (systemctl disable --now asgst-bpf)"

clean:
	rm -rf $(BUILD)

# ---- kernel side ----------------------------------------------------------
$(BUILD)/vmlinux.h: | $(BUILD)
	$(call msg,GEN,$@)
	$(Q)if [ -r $(BTF_VMLINUX) ] && command -v $(BPFTOOL) >/dev/null; then \
		$(BPFTOOL) btf dump file $(BTF_VMLINUX) format c > $@.tmp; \
	else \
		cp vmlinux/vmlinux_x86_64.h $@.tmp; \
	fi && mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h | $(BUILD)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-MMD -MP $(INCLUDES) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# ---- user space -----------------------------------------------------------
$(BUILD)/obj/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_OPT) -c $< -o $@

$(BUILD)/san/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_SAN) -c $< -o $@

$(BUILD)/fuzzobj/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CFLAGS_BASE) -Wno-unknown-warning-option -O1 \
		$(FUZZFLAGS) -c $< -o $@

# the stub only names the files: it follows their folders (a file added
# or removed), the object follows the files
$(BUILD)/res.s: $(sort $(dir $(RES_FILES))) | $(BUILD)
	$(call msg,GEN,$@)
	$(Q){ printf '\t.section .rodata\n'; \
	$(foreach f,$(RES_FILES),printf '\t.globl %s\n%s:\n\t.incbin "%s"\n\t.byte 0\n' \
		$(call res_sym,$(f)) $(call res_sym,$(f)) $(f);) \
	printf '\t.section .note.GNU-stack,"",@progbits\n'; } > $@

$(BUILD)/obj/res.o: $(BUILD)/res.s $(RES_FILES)
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -c $< -o $@

$(BUILD)/libasgst.a: $(LIB_OBJS) $(RES_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libasgst-san.a: $(SAN_OBJS) $(RES_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libasgst-fuzz.a: $(FUZZ_LIB_OBJS) $(RES_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/asgst-bpf: $(BUILD)/obj/user/main.o $(BUILD)/libasgst.a
	$(call msg,LD,$@)
	$(Q)$(CC) $^ $(LDLIBS) -o $@

# ---- agent ----------------------------------------------------------------
$(BUILD)/obj/agent/%.o: agent/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_OPT) $(AGENT_CFLAGS) -c $< -o $@

$(BUILD)/libasgst-agent.so: $(AGENT_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-z,defs -Wl,-z,now $^ -ldl -lpthread -o $@

# ---- tests ----------------------------------------------------------------
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libasgst-san.a | $(BUILD)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS_SAN) -Itests $< $(BUILD)/libasgst-san.a \
		-lcmocka $(LDLIBS) $(TEST_LDLIBS) -o $@

# the CPython layouts against the interpreters' own headers (py_layout.h):
# Debian's python3.11-dev (make deps), and pyenv's 3.11 where it is
PY311_INC	:= /usr/include/python3.11
PYENV311_INC	:= $(firstword $(wildcard /root/.pyenv/versions/3.11*/include/python3.11))
$(BUILD)/tests/test_py_layout: CFLAGS_SAN += -I$(PY311_INC)
$(BUILD)/tests/test_py_layout_pyenv: CFLAGS_SAN += -Itests/unit \
	$(if $(PYENV311_INC),-I$(PYENV311_INC),-DPY_LAYOUT_PYENV_MISSING)

# the agent's own unit test: its VM-reading module, built with sanitizers
AGENT_SAN_OBJS	:= $(patsubst %.c,$(BUILD)/san/%.o,$(filter-out agent/agent.c,$(AGENT_SRCS)))
$(BUILD)/san/agent/%.o: agent/%.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_SAN) $(AGENT_CFLAGS) -c $< -o $@

$(BUILD)/tests/test_agent_probe: tests/unit/test_agent_probe.c $(AGENT_SAN_OBJS) | $(BUILD)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS_SAN) -Itests $< $(AGENT_SAN_OBJS) -lcmocka -ldl -lpthread -o $@

$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/libasgst-fuzz.a | $(BUILD)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(CFLAGS_BASE) -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -Itests $< $(BUILD)/libasgst-fuzz.a \
		$(LDLIBS) -o $@

# benchmarks: optimized, against the non-sanitized library
$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/libasgst.a
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_OPT) -Itests $< $(BUILD)/libasgst.a $(LDLIBS) -o $@

$(BUILD)/workloads/%: tests/workloads/%.c | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) $< -lpthread -o $@

$(BUILD)/workloads/%.so: tests/workloads/%.c | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -fPIC -shared $< -o $@

$(BUILD)/workloads/nofp/libjnichain.so: tests/workloads/libjnichain.c | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -g,$(WL_CFLAGS)) \
		-fomit-frame-pointer -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -fPIC -shared $< -o $@

$(BUILD)/workloads/cfi/libjnichain.so: tests/workloads/libjnichain.c | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer,$(WL_CFLAGS)) \
		-fomit-frame-pointer -fPIC -shared $< -o $@

# frame pointers in all but the leaf: what a frame-pointer walk misses
$(BUILD)/workloads/cfi/cfi_leaf: WL_CFI_FLAGS += -fno-omit-frame-pointer \
	-momit-leaf-frame-pointer
# frame pointers in every function: a leaf's epilogue after "pop %rbp"
$(BUILD)/workloads/cfi/cfi_epilogue: WL_CFI_FLAGS += -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer

# with its library (the same source): a static destructor run at exit
$(BUILD)/workloads/cfi/cfi_exit: tests/workloads/cfi/cfi_exit.cpp | $(BUILD)/workloads
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(WL_CFI_FLAGS) -DCFI_EXIT_LIB -fPIC -shared $< \
		-o $(@D)/libcfi_exit.so
	$(Q)$(CXX) $(WL_CFI_FLAGS) $< -L$(@D) -lcfi_exit \
		-Wl,-rpath,'$$ORIGIN' -o $@

$(BUILD)/workloads/cfi/%: tests/workloads/cfi/%.c | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_CFI_FLAGS) $< -lpthread -o $@

$(BUILD)/workloads/cfi/%: tests/workloads/cfi/%.cpp | $(BUILD)/workloads
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(WL_CFI_FLAGS) $< -o $@

$(BUILD)/workloads/inline/%: tests/workloads/inline/%.cpp | $(BUILD)/workloads
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -O2 -g -Wall -Wextra -Werror $< -o $@

$(BUILD)/workloads/classes/.stamp: $(WL_JAVA_SRCS) | $(BUILD)/workloads
	$(call msg,JAVAC,$(BUILD)/workloads/classes)
	$(Q)mkdir -p $(@D) && $(JAVAC) --release 17 -g -d $(@D) $^ && touch $@

$(BUILD) $(BUILD)/bpf $(BUILD)/tests $(BUILD)/fuzz $(BUILD)/workloads:
	$(Q)mkdir -p $@

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
