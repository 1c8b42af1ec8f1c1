# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# ELF fixtures for the symbolization unit tests (included by the Makefile).
# Everything lands in $(BUILD)/fixtures/; tests find it next to their own
# binary ($(BUILD)/tests/../fixtures). nm listings of the unstripped files
# give the tests independent, real symbol addresses.
#   fx_pie               PIE executable (+ .nm)
#   fx_pie.stripped      strip --strip-all copy; its debug file is only under
#                        debugroot/.build-id/xx/yyyy.debug
#   libfx.so             shared library (+ .nm)
#   dl/libfx.so          stripped, .gnu_debuglink -> dl/.debug/libfx.so.debug
#   dl2/libfx.so         stripped, .gnu_debuglink -> dl2/libfx.so.dbg (same dir)
#   libfxcxx.so          C++ library (+ .nm) for demangling
#   libfxinl.so          -O2 -g, functions inlined (+ .a2l: llvm-addr2line
#                        -a -i -f of every byte of fx_outer)
#   inl/libfxinl.so      stripped, .gnu_debuglink -> inl/.debug/libfxinl.so.debug
#   fx_plt               PIE with lazy-binding PLT stubs (.plt, .plt.got)
#   fx_plt_ibt.stripped  IBT stubs (.plt.sec), stripped; each with .plt:
#                        objdump's <name@plt> labels, the names' oracle
#   jvm17.maps, kallsyms.sample, kallsyms.restricted: saved real texts

FX		:= $(BUILD)/fixtures
FX_CFLAGS	:= -O1 -g -fno-omit-frame-pointer -fno-inline -Wall -Wextra \
		   -Werror -Wl,--build-id=sha1
CXX		?= g++

FX_ALL := $(FX)/fx_pie $(FX)/fx_pie.nm $(FX)/fx_pie.stripped \
	  $(FX)/debugroot/.stamp $(FX)/libfx.so $(FX)/libfx.so.nm \
	  $(FX)/dl/libfx.so $(FX)/dl2/libfx.so $(FX)/libfxcxx.so \
	  $(FX)/libfxcxx.so.nm $(FX)/jvm17.maps $(FX)/kallsyms.sample \
	  $(FX)/kallsyms.restricted $(FX)/empty-debugroot/.stamp \
	  $(FX)/libfxinl.so $(FX)/libfxinl.so.a2l $(FX)/inl/libfxinl.so \
	  $(FX)/fx_plt $(FX)/fx_plt.plt $(FX)/fx_plt.nm $(FX)/fx_plt_ibt.stripped \
	  $(FX)/fx_plt_ibt.stripped.plt

FIXTURES += $(FX_ALL)

# the symbolization tests read these at run time
$(BUILD)/tests/test_maps $(BUILD)/tests/test_elf_symbols \
$(BUILD)/tests/test_kallsyms $(BUILD)/tests/test_demangle \
$(BUILD)/tests/test_symbolize $(BUILD)/tests/test_dwarf_lines: | $(FX_ALL)

$(FX)/fx_pie: tests/fixtures/fx_prog.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FX_CFLAGS) -fPIE -pie $< -o $@

$(FX)/libfx.so: tests/fixtures/libfx.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FX_CFLAGS) -fPIC -shared $< -o $@

$(FX)/libfxcxx.so: tests/fixtures/fx_cxx.cpp
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -O1 -g -fno-omit-frame-pointer -fPIC -shared \
		-Wl,--build-id=sha1 $< -o $@

$(FX)/%.nm: $(FX)/%
	$(call msg,NM,$@)
	$(Q)nm --defined-only $< > $@.tmp && mv $@.tmp $@

$(FX)/fx_pie.stripped: $(FX)/fx_pie
	$(call msg,STRIP,$@)
	$(Q)objcopy --strip-all $< $@

# debug file by build-id: debugroot/.build-id/<2 hex>/<rest>.debug
$(FX)/debugroot/.stamp: $(FX)/fx_pie
	$(call msg,DEBUG,$(FX)/debugroot)
	$(Q)id=$$(readelf -n $< | sed -n 's/.*Build ID: *//p') && \
		test -n "$$id" && \
		d=$(FX)/debugroot/.build-id/$$(echo $$id | cut -c1-2) && \
		mkdir -p $$d && \
		objcopy --only-keep-debug $< $$d/$$(echo $$id | cut -c3-).debug && \
		touch $@

$(FX)/empty-debugroot/.stamp:
	$(Q)mkdir -p $(@D) && touch $@

$(FX)/dl/libfx.so: $(FX)/libfx.so
	$(call msg,DEBUG,$@)
	$(Q)mkdir -p $(@D)/.debug
	$(Q)objcopy --only-keep-debug $< $(@D)/.debug/libfx.so.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(@D)/.debug/libfx.so.debug \
		$< $@

$(FX)/dl2/libfx.so: $(FX)/libfx.so
	$(call msg,DEBUG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)objcopy --only-keep-debug $< $(@D)/libfx.so.dbg
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(@D)/libfx.so.dbg $< $@

$(FX)/jvm17.maps $(FX)/kallsyms.sample: $(FX)/%: tests/fixtures/%
	$(Q)mkdir -p $(@D) && cp $< $@

# the same table as a non-root reader sees it with kptr_restrict=1
$(FX)/kallsyms.restricted: tests/fixtures/kallsyms.sample
	$(Q)mkdir -p $(@D) && sed 's/^[0-9a-f]*/0000000000000000/' $< > $@

$(FX)/libfxinl.so: tests/fixtures/fx_inline.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fPIC -shared -Wall -Wextra -Werror \
		-Wl,--build-id=sha1 $< -o $@

# the oracle: an independent DWARF reader's chain at each byte of fx_outer
$(FX)/libfxinl.so.a2l: $(FX)/libfxinl.so
	$(call msg,A2L,$@)
	$(Q)set -e; set -- $$(nm -S --defined-only $< | \
		awk '$$4 == "fx_outer" { print $$1, $$2 }'); \
		test -n "$$1"; \
		i=0; while [ $$i -lt $$((0x$$2)) ]; do \
			printf '0x%x\n' $$((0x$$1 + i)); i=$$((i + 1)); \
		done | llvm-addr2line -a -i -f -e $< > $@.tmp && mv $@.tmp $@

$(FX)/inl/libfxinl.so: $(FX)/libfxinl.so
	$(call msg,DEBUG,$@)
	$(Q)mkdir -p $(@D)/.debug
	$(Q)objcopy --only-keep-debug $< $(@D)/.debug/libfxinl.so.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(@D)/.debug/libfxinl.so.debug \
		$< $@

$(FX)/fx_plt: tests/fixtures/fx_plt.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FX_CFLAGS) -fPIE -pie -Wl,-z,lazy $< -o $@

$(FX)/fx_plt_ibt: tests/fixtures/fx_plt.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FX_CFLAGS) -fPIE -pie -fcf-protection=full -Wl,-z,ibtplt \
		$< -o $@

$(FX)/fx_plt_ibt.stripped: $(FX)/fx_plt_ibt
	$(call msg,STRIP,$@)
	$(Q)objcopy --strip-all $< $@

# binutils' names of the stubs (its synthetic symbols): "ADDR <NAME@plt>:"
$(FX)/%.plt: $(FX)/%
	$(call msg,OBJDUMP,$@)
	$(Q)objdump -d $< | grep '@plt>:$$' > $@.tmp && mv $@.tmp $@
