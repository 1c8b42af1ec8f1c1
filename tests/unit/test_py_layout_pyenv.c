// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_py_layout.c against pyenv's 3.11 headers (the Makefile gives -I) */
#include "test_py_layout.c"
