// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/container.h"
#include "profile/filter.h"
#include "trace.h"

static int add_ids(pid_t **ids, size_t *n, const char *arg, const char *opt,
		   char *err, size_t errlen)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;
		pid_t *nv;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || v <= 0 || v > INT_MAX) {
			snprintf(err, errlen, "--%s: '%s' is not a positive "
				 "number", opt, tok);
			rc = -EINVAL;
			goto cleanup;
		}
		nv = realloc(*ids, (*n + 1) * sizeof(**ids));
		if (!nv) {
			rc = -ENOMEM;
			goto cleanup;
		}
		*ids = nv;
		(*ids)[(*n)++] = (pid_t)v;
	}
cleanup:
	free(copy);
	return rc;
}

static int compile(regex_t *re, bool *have, const char *arg, const char *opt,
		   char *err, size_t errlen)
{
	char msg[128];
	int rc;

	if (*have)
		regfree(re);
	*have = false;
	rc = regcomp(re, arg, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, re, msg, sizeof(msg));
		snprintf(err, errlen, "--%s: bad regular expression '%s': %s",
			 opt, arg, msg);
		return -EINVAL;
	}
	*have = true;
	return 0;
}

int filter__name_mask(const char *list, const char *const *names, size_t n,
		      unsigned *mask, const char *opt, const char *what,
		      char *err, size_t errlen)
{
	char *copy = strdup(list), *tok, *save = NULL;
	unsigned m = 0;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t i, len;

		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i < n) {
			m |= 1u << i;
			continue;
		}
		/* "--kind: unknown kind 'x' (native, java, jvm)" */
		len = (size_t)snprintf(err, errlen, "%s: unknown %s '%s' (",
				       opt, what, tok);
		for (i = 0; i < n && len < errlen; i++)
			len += (size_t)snprintf(err + len, errlen - len, "%s%s",
						i ? ", " : "", names[i]);
		if (len < errlen)
			snprintf(err + len, errlen - len, ")");
		rc = -EINVAL;
	}
	if (!rc && !m) {
		snprintf(err, errlen, "%s: no %s given in '%s'", opt, what, list);
		rc = -EINVAL;
	}
	if (!rc)
		*mask |= m;
	free(copy);
	return rc;
}

int filter__option(struct filter *f, const char *name, const char *arg,
		   char *err, size_t errlen)
{
	if (!strcmp(name, "pid"))
		return add_ids(&f->pids, &f->npids, arg, name, err, errlen);
	if (!strcmp(name, "tid"))
		return add_ids(&f->tids, &f->ntids, arg, name, err, errlen);
	if (!strcmp(name, "thread"))
		return compile(&f->thread, &f->have_thread, arg, name, err,
			       errlen);
	if (!strcmp(name, "include"))
		return compile(&f->include, &f->have_include, arg, name, err,
			       errlen);
	if (!strcmp(name, "exclude"))
		return compile(&f->exclude, &f->have_exclude, arg, name, err,
			       errlen);
	if (!strcmp(name, "kind")) {
		static const char *const kinds[] = {
			[TRACE_KIND_NATIVE] = "native",
			[TRACE_KIND_JAVA] = "java",
			[TRACE_KIND_JVM] = "jvm",
		};

		return filter__name_mask(arg, kinds, 3, &f->kind_mask, "--kind",
					 "kind", err, errlen);
	}
	if (!strcmp(name, "state")) {
		static const char *const states[] = {
			[TRACE_STATE_UNKNOWN] = "unknown",
			[TRACE_STATE_IN_JAVA] = "in_java",
			[TRACE_STATE_IN_NATIVE] = "in_native",
			[TRACE_STATE_IN_VM] = "in_vm",
			[TRACE_STATE_BLOCKED] = "blocked",
		};

		return filter__name_mask(arg, states, 5, &f->state_mask,
					 "--state", "state", err, errlen);
	}
	if (!strcmp(name, "vthreads")) {
		if (!strcmp(arg, "merged"))
			f->vthreads = FILTER_VT_MERGED;
		else if (!strcmp(arg, "virtual"))
			f->vthreads = FILTER_VT_VIRTUAL;
		else if (!strcmp(arg, "carrier"))
			f->vthreads = FILTER_VT_CARRIER;
		else {
			snprintf(err, errlen, "--vthreads: unknown view '%s' "
				 "(merged, virtual or carrier)", arg);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(name, "java-only")) {
		f->java_only = true;
		return 0;
	}
	if (!strcmp(name, "reverse")) {
		f->reverse = true;
		return 0;
	}
	if (!strcmp(name, "container"))
		return container__parse_arg(arg, f->container,
					    sizeof(f->container), err, errlen);
	snprintf(err, errlen, "unknown filter --%s", name);
	return -EINVAL;
}

bool filter__active(const struct filter *f)
{
	return f->npids || f->ntids || f->have_thread || f->have_include ||
	       f->have_exclude || f->kind_mask || f->state_mask ||
	       f->vthreads || f->java_only || f->reverse || f->container[0];
}

bool filter__container_ok(const struct filter *f, const char *container_id)
{
	return !f->container[0] ||
	       container__id_matches(container_id, f->container);
}

static bool has_id(const pid_t *ids, size_t n, pid_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool is_java(const struct frame *fr)
{
	return fr->type == FRAME_JAVA || fr->type == FRAME_JAVA_INLINED ||
	       fr->type == FRAME_JAVA_NATIVE;
}

/* does any frame's display name (as collapsed shows it) match re? */
static bool any_frame_matches(const regex_t *re, const struct trace *t)
{
	char name[512];

	for (uint32_t i = 0; i < t->nframes; i++) {
		frame__display_name(&t->frames[i], name, sizeof(name), false);
		if (!regexec(re, name, 0, NULL, 0))
			return true;
	}
	return false;
}

/* --vthreads virtual / carrier: cut a virtual thread's stack at its entry */
static void vthread_view(uint8_t view, struct trace *t)
{
	uint32_t e;

	if (!(t->flags & TRACE_F_VTHREAD))
		return;
	for (e = 0; e < t->nframes; e++)
		if (t->frames[e].flags & FRAME_F_VTHREAD_ENTRY)
			break;
	if (e == t->nframes)
		return;		/* no boundary found: leave it whole */
	if (view == FILTER_VT_VIRTUAL) {
		t->nframes = e + 1;
	} else {
		memmove(t->frames, t->frames + e,
			(t->nframes - e) * sizeof(*t->frames));
		t->nframes -= e;
	}
}

bool filter__apply(const struct filter *f, struct trace *t)
{
	if (f->npids && !has_id(f->pids, f->npids, t->pid))
		return false;
	if (f->ntids && !has_id(f->tids, f->ntids, t->tid))
		return false;
	if (!filter__container_ok(f, t->container_id))
		return false;
	if (f->kind_mask && !(f->kind_mask & (1u << t->kind)))
		return false;
	if (f->state_mask && !(f->state_mask & (1u << t->state)))
		return false;
	if (f->vthreads != FILTER_VT_MERGED)
		vthread_view(f->vthreads, t);
	if (f->have_thread &&
	    regexec(&f->thread, t->thread ? t->thread : "", 0, NULL, 0))
		return false;
	if (f->have_include && !any_frame_matches(&f->include, t))
		return false;
	if (f->have_exclude && any_frame_matches(&f->exclude, t))
		return false;
	if (f->java_only) {
		uint32_t n = 0;

		for (uint32_t i = 0; i < t->nframes; i++)
			if (is_java(&t->frames[i]))
				t->frames[n++] = t->frames[i];
		if (!n)
			return false;	/* no Java frame: not a Java stack */
		t->nframes = n;
	}
	if (f->reverse) {
		for (uint32_t i = 0, j = t->nframes; i + 1 < j; i++, j--) {
			struct frame tmp = t->frames[i];

			t->frames[i] = t->frames[j - 1];
			t->frames[j - 1] = tmp;
		}
	}
	return true;
}

void filter__free(struct filter *f)
{
	if (f->have_thread)
		regfree(&f->thread);
	if (f->have_include)
		regfree(&f->include);
	if (f->have_exclude)
		regfree(&f->exclude);
	free(f->pids);
	free(f->tids);
	memset(f, 0, sizeof(*f));
}
