/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * policy__parse(): one YAML document -> struct policy, or diagnostics.
 *
 * libyaml's event API feeds a small tree of our own instead of
 * yaml_parser_load(): the document loader resolves aliases silently, and we
 * refuse them where they are written. The validator then visits every key
 * of every mapping: each is either understood or reported, so no rule a
 * user wrote is ever dropped (fail closed). Every problem is reported, not
 * only the first; the policy is returned only when there were none.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "container.h"
#include "file.h"
#include "net.h"
#include "policy.h"
#include "register.h"

/* A policy nests five levels (root, network, allow, a rule, ports); the cap
 * keeps the recursive free safe from "[[[[..." inputs. */
#define YAML_MAX_DEPTH		32
/* Longest cgroup selector: PATH_MAX less the mount point's prefix. */
#define SELECTOR_MAX		4000
/* How much of a user's value a message quotes. */
#define SHOW_MAX		48
#define SHOW_BUF		(SHOW_MAX * 4 + 8)
#define PATH_BUF		128
#define MAX_FIELDS		16

enum ytype { Y_SCALAR, Y_SEQ, Y_MAP, Y_ALIAS };

struct ynode {
	enum ytype type;
	struct policy_pos pos;
	bool plain;		/* scalar written without quotes */
	char *tag;		/* explicit tag, NULL when none */
	char *str;		/* scalar value (NUL-terminated), alias anchor */
	size_t len;		/* of str; a quoted "\0" can make it > strlen */
	struct ynode **kid;	/* items, or key, value, key, value, ... */
	size_t n, cap;
};

/* A diagnostic of this parse, kept so that they can be put in file order. */
struct placed {
	struct policy_pos pos;
	size_t seq;
	char *msg;		/* owned by diag */
};

struct ctx {
	const char *file;
	struct policy_diag *diag;
	size_t nerr;
	int err;		/* -ENOMEM once an allocation failed */
	struct placed *placed;
	size_t n_placed, cap_placed;
};

static void __attribute__((format(printf, 4, 5)))
errf(struct ctx *c, struct policy_pos pos, const char *key,
     const char *fmt, ...)
{
	char msg[POLICY_DIAG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->nerr++;
	if (policy_diag__add(c->diag, "%s:%d:%d: %s: %s", c->file, pos.line,
			     pos.col, key, msg)) {
		c->err = -ENOMEM;
		return;
	}
	if (c->n_placed == c->cap_placed) {
		size_t cap = c->cap_placed ? c->cap_placed * 2 : 16;
		struct placed *v = realloc(c->placed, cap * sizeof(*v));

		if (!v) {
			c->err = -ENOMEM;
			return;
		}
		c->placed = v;
		c->cap_placed = cap;
	}
	c->placed[c->n_placed] = (struct placed){
		pos, c->n_placed, c->diag->msgs[c->diag->n - 1],
	};
	c->n_placed++;
}

static int by_pos(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->pos.line != y->pos.line)
		return x->pos.line < y->pos.line ? -1 : 1;
	if (x->pos.col != y->pos.col)
		return x->pos.col < y->pos.col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The validator reports by schema (keys first, then each value), a reader
 * wants file order; a missing key, reported at its mapping's start, then
 * comes before the mapping's other problems. Ties keep their order.
 */
static void sort_diags(struct ctx *c)
{
	size_t i, first = c->diag->n - c->n_placed;

	if (c->err || !c->n_placed)
		return;
	qsort(c->placed, c->n_placed, sizeof(*c->placed), by_pos);
	for (i = 0; i < c->n_placed; i++)
		c->diag->msgs[first + i] = c->placed[i].msg;
}

static char *xstrdup(struct ctx *c, const char *s)
{
	char *d = strdup(s);

	if (!d)
		c->err = -ENOMEM;
	return d;
}

static struct policy_pos pos_of(yaml_mark_t m)
{
	struct policy_pos p = { .line = (int)m.line + 1, .col = (int)m.column + 1 };

	return p;
}

/*
 * User text as a message quotes it: at most SHOW_MAX bytes, control bytes
 * as \xNN, cut on a UTF-8 character boundary with "..." when longer.
 */
static const char *show(const char *s, size_t len, char *buf)
{
	size_t i, o = 0, take = len > SHOW_MAX ? SHOW_MAX : len;

	if (take < len)
		while (take > 0 && ((unsigned char)s[take] & 0xc0) == 0x80)
			take--;
	for (i = 0; i < take; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch == 0x7f)
			o += (size_t)sprintf(buf + o, "\\x%02x", ch);
		else
			buf[o++] = (char)ch;
	}
	if (take < len)
		o += (size_t)sprintf(buf + o, "...");
	buf[o] = '\0';
	return buf;
}

static const char *show_node(const struct ynode *n, char *buf)
{
	return show(n->str, n->len, buf);
}

/* ---- the tree ---------------------------------------------------------- */

static void ynode_free(struct ynode *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->n; i++)
		ynode_free(n->kid[i]);
	free(n->kid);
	free(n->tag);
	free(n->str);
	free(n);
}

static struct ynode *ynode_new(enum ytype type, yaml_mark_t mark,
			       const yaml_char_t *tag, const yaml_char_t *str,
			       size_t len)
{
	struct ynode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->type = type;
	n->pos = pos_of(mark);
	if (tag && !(n->tag = strdup((const char *)tag)))
		goto fail;
	if (str) {
		n->str = malloc(len + 1);
		if (!n->str)
			goto fail;
		memcpy(n->str, str, len);
		n->str[len] = '\0';
		n->len = len;
	}
	return n;
fail:
	ynode_free(n);
	return NULL;
}

static int ynode_add(struct ynode *parent, struct ynode *kid)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 4;
		struct ynode **v = realloc(parent->kid, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		parent->kid = v;
		parent->cap = cap;
	}
	parent->kid[parent->n++] = kid;
	return 0;
}

/* Where in buf a reader error's byte offset falls (libyaml reports reader
 * errors, such as bad UTF-8, by offset only). */
static struct policy_pos pos_at(const char *buf, size_t len, size_t off)
{
	struct policy_pos p = { .line = 1, .col = 1 };
	size_t i;

	for (i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			p.line++;
			p.col = 1;
		} else {
			p.col++;
		}
	}
	return p;
}

/*
 * In a [...] list '{' opens a mapping, so /srv/{cgroup} there is not one
 * string: YAML's rule, which libyaml keeps. The hint says how to write it.
 */
static const char *flow_hint(const char *buf, size_t len, size_t from, size_t to)
{
	size_t i, line = 0, start = 0, end;

	for (i = 0; i < len && line < from; i++)
		if (buf[i] == '\n') {
			line++;
			start = i + 1;
		}
	for (end = start; end < len && line <= to; end++)
		if (buf[end] == '\n')
			line++;
	for (i = start; i < end; i++)
		if (buf[i] == '{' && ((end - i >= 8 && !memcmp(buf + i, "{cgroup}", 8)) ||
				      (end - i >= 13 && !memcmp(buf + i, "{cgroup_path}", 13))))
			return "; a path with {cgroup} or {cgroup_path} in a [...] list must be quoted, \"/srv/jobs/{cgroup}/out\", or listed one '- ' item per line";
	return "";
}

static int yaml_failed(struct ctx *c, const yaml_parser_t *yp,
		       const char *buf, size_t len)
{
	struct policy_pos pos;

	if (yp->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (yp->error == YAML_READER_ERROR)
		pos = pos_at(buf, len, yp->problem_offset);
	else
		pos = pos_of(yp->problem_mark);
	if (yp->context)
		errf(c, pos, "yaml", "%s (%s at line %zu, column %zu)%s",
		     yp->problem ? yp->problem : "invalid YAML", yp->context,
		     yp->context_mark.line + 1, yp->context_mark.column + 1,
		     flow_hint(buf, len, yp->context_mark.line, yp->problem_mark.line));
	else
		errf(c, pos, "yaml", "%s",
		     yp->problem ? yp->problem : "invalid YAML");
	return -EINVAL;
}

/*
 * Read the stream into a tree. 0 with *root set, -EINVAL (diagnosed: a
 * syntax error, no document, a second document, too deep) or -ENOMEM.
 */
static int load_tree(struct ctx *c, const char *buf, size_t len,
		     struct ynode **root)
{
	struct ynode *stack[YAML_MAX_DEPTH], *tree = NULL;
	size_t depth = 0;
	yaml_parser_t yp;
	yaml_event_t ev;
	int err = 0, docs = 0;
	bool done = false;

	if (!yaml_parser_initialize(&yp))
		return -ENOMEM;
	yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
	while (!done && !err) {
		struct ynode *n = NULL;
		bool node = true, open = false;

		if (!yaml_parser_parse(&yp, &ev)) {
			err = yaml_failed(c, &yp, buf, len);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			node = false;
			if (docs == 0) {
				errf(c, pos_of(ev.start_mark), "document",
				     "empty file; expected a policy mapping with name and cgroups");
				err = -EINVAL;
			}
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				errf(c, pos_of(ev.start_mark), "document",
				     "a second document; a policy file holds exactly one policy, split it into two files");
				err = -EINVAL;
			}
			node = false;
			break;
		case YAML_SCALAR_EVENT:
			n = ynode_new(Y_SCALAR, ev.start_mark, ev.data.scalar.tag,
				      ev.data.scalar.value, ev.data.scalar.length);
			if (n)
				n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			break;
		case YAML_ALIAS_EVENT:
			n = ynode_new(Y_ALIAS, ev.start_mark, NULL, ev.data.alias.anchor,
				      strlen((const char *)ev.data.alias.anchor));
			break;
		case YAML_SEQUENCE_START_EVENT:
			n = ynode_new(Y_SEQ, ev.start_mark, ev.data.sequence_start.tag,
				      NULL, 0);
			open = true;
			break;
		case YAML_MAPPING_START_EVENT:
			n = ynode_new(Y_MAP, ev.start_mark, ev.data.mapping_start.tag,
				      NULL, 0);
			open = true;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			node = false;
			break;
		default:
			node = false;
			break;
		}
		if (node) {
			/* libyaml emits one root per document and we stop at
			 * the second document, so depth 0 means "the root". */
			if (!n || (depth && ynode_add(stack[depth - 1], n))) {
				ynode_free(n);
				err = -ENOMEM;
			} else if (!depth) {
				tree = n;
			}
			if (!err && open) {
				if (depth == YAML_MAX_DEPTH) {
					errf(c, n->pos, "yaml",
					     "nested deeper than %d levels; a policy needs at most 5",
					     YAML_MAX_DEPTH);
					err = -EINVAL;
				} else {
					stack[depth++] = n;
				}
			}
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);
	if (err) {
		ynode_free(tree);
		return err;
	}
	*root = tree;
	return 0;
}

/* ---- typed access, each reporting what it expected -------------------- */

/* Is the scalar exactly `word` (an embedded NUL never matches)? */
static bool is(const struct ynode *n, const char *word)
{
	return n->len == strlen(word) && memcmp(n->str, word, n->len) == 0;
}

static bool is_null(const struct ynode *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	size_t i;

	if (n->type != Y_SCALAR || !n->plain || n->tag)
		return false;
	for (i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (is(n, nulls[i]))
			return true;
	return false;
}

static const char *describe(const struct ynode *n, char *buf)
{
	char tmp[SHOW_BUF];

	if (n->type == Y_SEQ)
		return "a sequence";
	if (n->type == Y_MAP)
		return "a mapping";
	if (is_null(n))
		return "null";
	snprintf(buf, SHOW_BUF + 4, n->plain ? "'%s'" : "\"%s\"",
		 show_node(n, tmp));
	return buf;
}

static const char *const type_names[] = {
	[Y_SCALAR] = "a string",
	[Y_SEQ] = "a sequence",
	[Y_MAP] = "a mapping",
	[Y_ALIAS] = "an alias",
};

/*
 * Is n of the type wanted? `what` overrides the name of the type in the
 * message ("true or false"). Aliases and explicit tags are refused
 * everywhere: they make a value mean something other than what is written
 * in its place.
 */
static bool want(struct ctx *c, const struct ynode *n, const char *key,
		 enum ytype type, const char *what)
{
	char buf[SHOW_BUF + 4];

	if (n->type == Y_ALIAS) {
		errf(c, n->pos, key,
		     "aliases (*%s) are not supported; write the value out",
		     show_node(n, buf));
		return false;
	}
	if (n->tag) {
		errf(c, n->pos, key,
		     "YAML tags (%s) are not supported; remove the tag",
		     show(n->tag, strlen(n->tag), buf));
		return false;
	}
	if (n->type == type && !is_null(n))
		return true;
	errf(c, n->pos, key, "expected %s, got %s",
	     what ? what : type_names[type], describe(n, buf));
	return false;
}

/* A string we keep: C code downstream cannot hold an embedded NUL. */
static bool want_str(struct ctx *c, const struct ynode *n, const char *key)
{
	if (!want(c, n, key, Y_SCALAR, NULL))
		return false;
	if (strlen(n->str) != n->len) {
		errf(c, n->pos, key, "contains a NUL character; remove it");
		return false;
	}
	return true;
}

static bool get_bool(struct ctx *c, const struct ynode *n, const char *key,
		     bool *out)
{
	char buf[SHOW_BUF + 4];

	if (!want(c, n, key, Y_SCALAR, "true or false"))
		return false;
	/* Only the two spellings everyone reads the same way: YAML 1.1
	 * would also take yes/no/on/off, and `no` meaning false (Norway)
	 * is a classic surprise. */
	if (n->plain && (is(n, "true") || is(n, "false"))) {
		*out = is(n, "true");
		return true;
	}
	errf(c, n->pos, key, "expected true or false%s, got %s",
	     n->plain ? "" : " without quotes", describe(n, buf));
	return false;
}

/*
 * "a, b, c" (or "a, b or c") from n strings `stride` bytes apart: a words
 * array, or the name member leading each struct of an array.
 */
static const char *list_of(char *buf, size_t sz, const void *first, size_t n,
			   size_t stride, bool or)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < n && o < sz; i++)
		o += (size_t)snprintf(buf + o, sz - o, "%s%s",
				      i == 0 ? "" : or && i + 1 == n ? " or " : ", ",
				      *(const char *const *)((const char *)first +
							     i * stride));
	return buf;
}

/* One of `words`, as *out = its index; the message lists them all. */
static bool get_word(struct ctx *c, const struct ynode *n, const char *key,
		     const char *const *words, size_t nwords, int *out)
{
	char list[128], buf[SHOW_BUF + 4];
	size_t i;

	list_of(list, sizeof(list), words, nwords, sizeof(*words), true);
	if (!want(c, n, key, Y_SCALAR, list))
		return false;
	for (i = 0; i < nwords; i++) {
		if (is(n, words[i])) {
			*out = (int)i;
			return true;
		}
	}
	errf(c, n->pos, key, "expected %s, got %s", list, describe(n, buf));
	return false;
}

/* A dotted path ends in "..." rather than being cut without a trace. */
static const char *path_done(char *buf, int n)
{
	if (n >= PATH_BUF)
		memcpy(buf + PATH_BUF - 4, "...", 4);
	return buf;
}

static const char *join(char *buf, const char *parent, const char *key)
{
	return path_done(buf, snprintf(buf, PATH_BUF, "%s%s%s", parent,
				       parent[0] ? "." : "", key));
}

static const char *item(char *buf, const char *parent, size_t i)
{
	return path_done(buf, snprintf(buf, PATH_BUF, "%s[%zu]", parent, i));
}

/* The path of a problem with the node at `path` itself; "" is the root. */
static const char *at(const char *path)
{
	return path[0] ? path : "document";
}

struct field {
	const char *name;
	bool required;
};

/*
 * n must be a mapping whose keys are all among f[] and each appear once;
 * val[i] receives the value of f[i] (NULL when absent). Every problem is
 * reported; false only when n is not a mapping at all.
 */
static bool get_fields(struct ctx *c, const struct ynode *n, const char *path,
		       const struct field *f, size_t nf,
		       const struct ynode **val)
{
	const struct ynode *keys[MAX_FIELDS] = { NULL };
	char names[160], buf[SHOW_BUF + 4], kpath[PATH_BUF];
	size_t i, j;

	for (i = 0; i < nf; i++)
		val[i] = NULL;
	list_of(names, sizeof(names), f, nf, sizeof(*f), false);
	if (!want(c, n, at(path), Y_MAP, NULL))
		return false;
	for (i = 0; i + 1 < n->n; i += 2) {
		const struct ynode *k = n->kid[i];

		if (!want(c, k, at(path), Y_SCALAR, "a string key"))
			continue;
		for (j = 0; j < nf && !is(k, f[j].name); j++)
			;
		if (j == nf) {
			errf(c, k->pos, join(kpath, path, show_node(k, buf)),
			     "unknown key '%s'; expected one of: %s",
			     show_node(k, buf), names);
		} else if (keys[j]) {
			errf(c, k->pos, join(kpath, path, f[j].name),
			     "duplicate key; first given at line %d, column %d",
			     keys[j]->pos.line, keys[j]->pos.col);
		} else {
			keys[j] = k;
			val[j] = n->kid[i + 1];
		}
	}
	for (j = 0; j < nf; j++)
		if (f[j].required && !keys[j])
			errf(c, n->pos, join(kpath, path, f[j].name),
			     "required key is missing");
	return true;
}

/*
 * n must be a sequence of 1..max items; `noun` names them in messages and
 * `empty_hint` says what to write instead of an empty list (NULL: an empty
 * list means something, such as "no reads anywhere", and is allowed).
 */
static bool get_seq(struct ctx *c, const struct ynode *n, const char *key,
		    size_t max, const char *noun, const char *empty_hint)
{
	if (!want(c, n, key, Y_SEQ, NULL))
		return false;
	if (n->n == 0 && empty_hint) {
		errf(c, n->pos, key, "empty list; %s", empty_hint);
		return false;
	}
	if (n->n > max) {
		errf(c, n->pos, key, "%zu %s; at most %zu are supported",
		     n->n, noun, max);
		return false;
	}
	return true;
}

/* get_seq() and an array of one zeroed element per item, or NULL. */
static void *get_array(struct ctx *c, const struct ynode *n, const char *key,
		       size_t max, const char *noun, const char *empty_hint,
		       size_t size)
{
	void *v;

	if (!get_seq(c, n, key, max, noun, empty_hint))
		return NULL;
	v = calloc(n->n ? n->n : 1, size);
	if (!v)
		c->err = -ENOMEM;
	return v;
}

/* ---- the schema --------------------------------------------------------- */

static void check_name(struct ctx *c, const struct ynode *n, struct policy *p)
{
	char buf[SHOW_BUF + 4], ch_buf[32];
	size_t i;

	if (!want_str(c, n, "name"))
		return;
	if (n->len == 0 || n->len > POLICY_NAME_MAX) {
		errf(c, n->pos, "name",
		     "%zu characters; expected 1-%d characters of a-z, 0-9 and '-'",
		     n->len, POLICY_NAME_MAX);
		return;
	}
	for (i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->str[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      ch == '-')) {
			/* Name the culprit; half a UTF-8 character would print
			 * as garbage, so those are just "non-ASCII". */
			if (ch >= 0x80)
				snprintf(ch_buf, sizeof(ch_buf), "a non-ASCII character");
			else if (ch < 0x20 || ch == 0x7f)
				snprintf(ch_buf, sizeof(ch_buf), "the control character \\x%02x", ch);
			else
				snprintf(ch_buf, sizeof(ch_buf), "the character '%c'", ch);
			errf(c, n->pos, "name",
			     "%s has %s; use only a-z, 0-9 and '-'",
			     describe(n, buf), ch_buf);
			return;
		}
	}
	p->name = xstrdup(c, n->str);
	p->name_pos = n->pos;
}

/*
 * Why the absolute path s is not in normal form, or NULL; `dots` is the
 * message for a '.' or '..' component. Those are refused, not resolved:
 * the kernel side compares text, so "/task/../etc" would not mean what it
 * seems to.
 */
static const char *unnormal(const char *s, size_t len, const char *dots)
{
	const char *comp, *end;

	if (len == 1)
		return NULL;
	if (s[len - 1] == '/')
		return "ends in '/'; remove the trailing '/'";
	for (comp = s + 1; comp <= s + len; comp = end + 1) {
		end = strchr(comp, '/');
		if (!end)
			end = s + len;
		if (end == comp)
			return "has an empty component ('//'); write a single '/'";
		if ((end - comp == 1 && comp[0] == '.') ||
		    (end - comp == 2 && comp[0] == '.' && comp[1] == '.'))
			return dots;
	}
	return NULL;
}

/* Why a cgroup selector is refused, or NULL. */
static const char *selector_problem(const char *s, size_t len)
{
	if (s[0] != '/')
		return "must start with '/' (a path below the cgroup2 mount, e.g. /sandboxes/*)";
	if (len == 1)
		return "is the root cgroup; confining every process on the host is refused, name a child cgroup";
	if (len > SELECTOR_MAX)
		return "is too long for a cgroup path";
	return unnormal(s, len,
			"has a '.' or '..' component; name the cgroup by its own path");
}

/*
 * Is s listed among the first n entries of an array before it? The
 * entries' strings lie `stride` bytes apart from *str (NULL: an entry
 * already refused), their positions `pos_stride` apart from *pos. The
 * later one is reported.
 */
static bool listed_twice(struct ctx *c, const struct ynode *s, const char *key,
			 const void *str, size_t stride, const void *pos,
			 size_t pos_stride, size_t n)
{
	char buf[SHOW_BUF + 4];
	size_t j;

	for (j = 0; j < n; j++) {
		const char *t = *(const char *const *)((const char *)str + j * stride);
		const struct policy_pos *at =
			(const void *)((const char *)pos + j * pos_stride);

		if (t && strcmp(t, s->str) == 0) {
			errf(c, s->pos, key,
			     "%s is listed twice; first at line %d, column %d",
			     describe(s, buf), at->line, at->col);
			return true;
		}
	}
	return false;
}

static void check_cgroups(struct ctx *c, const struct ynode *n,
			  struct policy *p)
{
	char key[PATH_BUF], buf[SHOW_BUF + 4];
	size_t i;

	p->cgroups = get_array(c, n, "cgroups", POLICY_MAX_SELECTORS, "selectors",
			       "expected at least one cgroup selector such as /sandboxes/*",
			       sizeof(*p->cgroups));
	if (!p->cgroups)
		return;
	p->cgroups_pos = calloc(n->n, sizeof(*p->cgroups_pos));
	if (!p->cgroups_pos) {
		c->err = -ENOMEM;
		return;
	}
	for (i = 0; i < n->n; i++) {
		const struct ynode *s = n->kid[i];
		const char *why;

		item(key, "cgroups", i);
		if (!want_str(c, s, key))
			continue;
		why = selector_problem(s->str, s->len);
		if (why) {
			errf(c, s->pos, key, "%s %s", describe(s, buf), why);
			continue;
		}
		if (listed_twice(c, s, key, p->cgroups, sizeof(*p->cgroups),
				 p->cgroups_pos, sizeof(*p->cgroups_pos), i))
			continue;
		p->cgroups[i] = xstrdup(c, s->str);
		p->cgroups_pos[i] = s->pos;
	}
	p->n_cgroups = n->n;
}

/* ---- container selectors (policy/container.c) ---- */

/* A glob of a container selector: a string of printable characters, at
 * most max bytes (a longer one could match no name the runtime keeps). */
static char *get_glob(struct ctx *c, const struct ynode *n, const char *key,
		      size_t max)
{
	char buf[SHOW_BUF + 4];
	size_t i;

	if (!want_str(c, n, key))
		return NULL;
	if (n->len == 0 || n->len > max) {
		errf(c, n->pos, key, "%zu characters; expected 1 to %zu", n->len, max);
		return NULL;
	}
	for (i = 0; i < n->len; i++)
		if ((unsigned char)n->str[i] < 0x20 || n->str[i] == 0x7f) {
			errf(c, n->pos, key, "%s has a control character; remove it",
			     describe(n, buf));
			return NULL;
		}
	return xstrdup(c, n->str);
}

/* A pod UID as the kubelet writes it: 8-4-4-4-12 lower-case hex. */
static char *get_pod_uid(struct ctx *c, const struct ynode *n, const char *key)
{
	char buf[SHOW_BUF + 4];
	size_t i;

	if (!want_str(c, n, key))
		return NULL;
	for (i = 0; i < n->len; i++) {
		char ch = n->str[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? ch != '-' : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			break;
	}
	if (n->len != CONTAINER_UID_MAX || i != n->len) {
		errf(c, n->pos, key,
		     "%s is not a pod UID; expected 8-4-4-4-12 lower-case hex digits, such as 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0 (kubectl get pod NAME -o jsonpath='{.metadata.uid}')",
		     describe(n, buf));
		return NULL;
	}
	return xstrdup(c, n->str);
}

/* "namespace/name", each part a glob without '/'. */
static char *get_pod_glob(struct ctx *c, const struct ynode *n, const char *key)
{
	char buf[SHOW_BUF + 4];
	const char *slash;
	char *g = get_glob(c, n, key, 2 * CONTAINER_NAME_MAX + 1);

	if (!g)
		return NULL;
	slash = strchr(g, '/');
	if (!slash || slash == g || !slash[1] || strchr(slash + 1, '/')) {
		errf(c, n->pos, key,
		     "%s is not namespace/name; write the pod's namespace, '/', and its name, each a glob (default/web-*, */web)",
		     describe(n, buf));
		free(g);
		return NULL;
	}
	return g;
}

static struct policy_container *ctr_add(struct ctx *c, struct policy *p,
					const char *key, size_t idx,
					const struct ynode *n)
{
	struct policy_container *v = realloc(p->ctrs, (p->n_ctrs + 1) * sizeof(*v));

	if (!v) {
		c->err = -ENOMEM;
		return NULL;
	}
	p->ctrs = v;
	v = &p->ctrs[p->n_ctrs++];
	memset(v, 0, sizeof(*v));
	v->key = key;
	v->idx = idx;
	v->pos = n->pos;
	return v;
}

static void check_containers(struct ctx *c, const struct ynode *n,
			     struct policy *p)
{
	static const struct field f[] = {
		{ "runtime", false }, { "name", false }, { "id", false },
		{ "namespace", false },
	};
	static const char *const runtimes[] = {
		"docker", "containerd", "cri-o", "podman",
	};
	char key[PATH_BUF], sub[PATH_BUF];
	const struct ynode *v[4];
	size_t i;
	int rt;

	if (!get_seq(c, n, "containers", POLICY_MAX_SELECTORS, "selectors",
		     "name at least one container, such as {runtime: docker, name: web-*}"))
		return;
	for (i = 0; i < n->n; i++) {
		struct policy_container *s;

		item(key, "containers", i);
		if (!get_fields(c, n->kid[i], key, f, 4, v))
			continue;
		if (!v[0] && !v[1] && !v[2] && !v[3]) {
			/* An unknown key was reported already. */
			if (!n->kid[i]->n)
				errf(c, n->kid[i]->pos, key,
				     "empty selector; give a runtime, a name or an id (every container of a runtime: {runtime: docker})");
			continue;
		}
		s = ctr_add(c, p, "containers", i, n->kid[i]);
		if (!s)
			return;
		if (v[0] && get_word(c, v[0], join(sub, key, "runtime"), runtimes, 4, &rt))
			s->runtime = container__runtime_parse(runtimes[rt]);
		if (v[1])
			s->name = get_glob(c, v[1], join(sub, key, "name"), CONTAINER_NAME_MAX);
		if (v[2])
			s->id = get_glob(c, v[2], join(sub, key, "id"), CONTAINER_ID_MAX);
		if (v[3]) {
			s->ns = get_glob(c, v[3], join(sub, key, "namespace"), 63);
			if (s->ns && (strpbrk(s->ns, "/*?[") || s->ns[0] == '.')) {
				errf(c, v[3]->pos, join(sub, key, "namespace"),
				     "'%s' is not a containerd namespace; write one name, without '/' or wildcards",
				     s->ns);
				free(s->ns);
				s->ns = NULL;
			} else if (s->ns && !container__namespace_ok(s->ns)) {
				/* Its cgroups are another runtime's (/docker/<id>)
				 * or systemd's: the selector would never match. */
				errf(c, v[3]->pos, join(sub, key, "namespace"),
				     "'%s' is a top-level directory of another runtime or of systemd, never a containerd namespace's; name the namespace as `ctr namespaces ls` shows it",
				     s->ns);
				free(s->ns);
				s->ns = NULL;
			}
			if (s->runtime && s->runtime != CONTAINER_CONTAINERD)
				errf(c, v[3]->pos, join(sub, key, "namespace"),
				     "only containerd has namespaces; remove it, or use runtime: containerd");
		}
	}
}

static void check_pods(struct ctx *c, const struct ynode *n, struct policy *p)
{
	static const struct field f[] = { { "name", false }, { "pod_uid", false } };
	char key[PATH_BUF], sub[PATH_BUF];
	const struct ynode *v[2];
	size_t i;

	if (!get_seq(c, n, "pods", POLICY_MAX_SELECTORS, "selectors",
		     "name at least one pod, such as default/web-* or {pod_uid: ...}"))
		return;
	for (i = 0; i < n->n; i++) {
		const struct ynode *it = n->kid[i];
		struct policy_container *s;

		item(key, "pods", i);
		if (it->type == Y_SCALAR) {
			s = ctr_add(c, p, "pods", i, it);
			if (s)
				s->pod = get_pod_glob(c, it, key);
			continue;
		}
		if (!get_fields(c, it, key, f, 2, v))
			continue;
		if (!v[0] && !v[1]) {
			if (!it->n)
				errf(c, it->pos, key, "empty selector; give name (namespace/name) or pod_uid");
			continue;
		}
		s = ctr_add(c, p, "pods", i, it);
		if (!s)
			return;
		if (v[0])
			s->pod = get_pod_glob(c, v[0], join(sub, key, "name"));
		if (v[1])
			s->pod_uid = get_pod_uid(c, v[1], join(sub, key, "pod_uid"));
	}
}

static void check_images(struct ctx *c, const struct ynode *n, struct policy *p)
{
	char key[PATH_BUF];
	size_t i;

	if (!get_seq(c, n, "images", POLICY_MAX_SELECTORS, "selectors",
		     "name at least one image, such as docker.io/library/busybox:*"))
		return;
	for (i = 0; i < n->n; i++) {
		struct policy_container *s;

		item(key, "images", i);
		s = ctr_add(c, p, "images", i, n->kid[i]);
		if (s)
			s->image = get_glob(c, n->kid[i], key, CONTAINER_IMAGE_MAX);
	}
}

/* The container selectors' path forms, after the `cgroups:` globs (each
 * form once per policy). */
static void add_container_globs(struct ctx *c, struct policy *p)
{
	char *g[64];
	size_t i, k, j;
	int n;

	p->n_cgroups_user = p->n_cgroups;
	for (i = 0; i < p->n_ctrs && !c->err; i++) {
		n = policy__container_globs(&p->ctrs[i], g, 64);
		if (n < 0) {
			c->err = n;
			return;
		}
		for (k = 0; k < (size_t)n; k++) {
			for (j = p->n_cgroups_user; j < p->n_cgroups; j++)
				if (!strcmp(p->cgroups[j], g[k]))
					break;
			if (j < p->n_cgroups) {
				free(g[k]);
				continue;
			}
			{
				char **nv = realloc(p->cgroups, (p->n_cgroups + 1) * sizeof(*nv));
				struct policy_pos *np = nv ? realloc(p->cgroups_pos, (p->n_cgroups + 1) * sizeof(*np)) : NULL;

				if (nv)
					p->cgroups = nv;
				if (!np) {
					free(g[k]);
					for (k++; k < (size_t)n; k++)
						free(g[k]);
					c->err = -ENOMEM;
					return;
				}
				p->cgroups_pos = np;
				p->cgroups[p->n_cgroups] = g[k];
				p->cgroups_pos[p->n_cgroups++] = p->ctrs[i].pos;
			}
		}
	}
}

/*
 * A CIDR from a rule or an override. Host bits are refused, not cleared:
 * "10.0.0.1/8" is more often a typo for /32 than a way to write 10/8.
 */
static bool get_cidr(struct ctx *c, const struct ynode *n, const char *key,
		     struct policy_cidr *out)
{
	char buf[SHOW_BUF + 4], net[64];
	struct policy_cidr cidr;
	int err;

	if (!want_str(c, n, key))
		return false;
	err = policy_cidr__parse_raw(n->str, &cidr);
	if (err == -ERANGE) {
		bool v6 = strchr(n->str, ':');

		errf(c, n->pos, key, "%s: prefix too long; expected /0 to /%d for %s",
		     describe(n, buf), v6 ? 128 : 32, v6 ? "IPv6" : "IPv4");
		return false;
	}
	if (err) {
		errf(c, n->pos, key,
		     "%s is not a CIDR; expected an IPv4 or IPv6 address with an optional /prefix, e.g. 10.0.0.0/8 or fd00::/8",
		     describe(n, buf));
		return false;
	}
	if (policy_cidr__mask(&cidr)) {
		errf(c, n->pos, key, "%s: host bits set; did you mean %s?",
		     describe(n, buf), policy_cidr__str(&cidr, net, sizeof(net)));
		return false;
	}
	policy_cidr__normalize(&cidr);
	*out = cidr;
	return true;
}

/*
 * 8080, "8080" or "9000-9100": decimal, no sign, no leading zero (YAML 1.1
 * reads 0800 as octal; better refuse it than guess).
 */
static void check_port(struct ctx *c, const struct ynode *n, const char *key,
		       struct policy_ports *out)
{
	const char *s = n->str, *start[2] = { n->str, NULL };
	unsigned long v[2] = { 0, 0 };
	size_t part = 0, i, k;
	char buf[SHOW_BUF + 4];

	if (!want(c, n, key, Y_SCALAR, "a port or a range \"lo-hi\""))
		return;
	for (i = 0; i <= n->len; i++) {
		char ch = i < n->len ? s[i] : '\0';
		size_t digits = (size_t)(s + i - start[part]);

		if (ch >= '0' && ch <= '9' && !(digits == 1 && s[i - 1] == '0')) {
			/* Saturate; the message quotes the digits as written. */
			if (v[part] <= 65535)
				v[part] = v[part] * 10 + (unsigned long)(ch - '0');
		} else if (digits && ch == '-' && part == 0) {
			start[++part] = s + i + 1;
		} else if (!(digits && i == n->len)) {
			errf(c, n->pos, key,
			     "expected a port 1-65535 or a range like \"9000-9100\", got %s",
			     describe(n, buf));
			return;
		}
	}
	if (part == 0) {
		v[1] = v[0];
		start[1] = start[0];
	}
	for (k = 0; k < 2; k++) {
		if (v[k] < 1 || v[k] > 65535) {
			int len = (int)strspn(start[k], "0123456789");

			errf(c, n->pos, key, "port %.*s%s out of range; expected 1-65535",
			     len > 10 ? 10 : len, start[k], len > 10 ? "..." : "");
			return;
		}
	}
	if (v[0] > v[1]) {
		errf(c, n->pos, key, "range %lu-%lu is reversed; write %lu-%lu",
		     v[0], v[1], v[1], v[0]);
		return;
	}
	out->lo = (uint16_t)v[0];
	out->hi = (uint16_t)v[1];
}

static void check_ports(struct ctx *c, const struct ynode *n, const char *path,
			struct policy_net_rule *r)
{
	char key[PATH_BUF], ikey[PATH_BUF];
	size_t i;

	join(key, path, "ports");
	if (!get_seq(c, n, key, POLICY_MAX_PORTS, "entries",
		     "omit ports to allow every port"))
		return;
	for (i = 0; i < n->n; i++)
		check_port(c, n->kid[i], item(ikey, key, i), &r->ports[i]);
	r->n_ports = n->n;
}

/*
 * A rule may not open a built-in metadata endpoint unless an override of
 * this policy covers every part of it the rule reaches. CIDRs nest or are
 * disjoint, so the part reached is the longer of rule and endpoint. All
 * endpoints a rule reaches go in one message: one rule, one problem.
 */
static void check_meta(struct ctx *c, const struct ynode *n, const char *key,
		       const struct policy_cidr *rule, const struct policy *p)
{
	const char *hit[16];	/* more than the table holds */
	char rs[64], list[256];
	size_t i, j, hits = 0;

	for (i = 0; i < policy_n_meta_endpoints; i++) {
		const struct policy_endpoint *e = &policy_meta_endpoints[i];
		const struct policy_cidr *part;

		if (!policy_cidr__overlaps(rule, &e->cidr))
			continue;
		part = rule->prefix > e->cidr.prefix ? rule : &e->cidr;
		for (j = 0; j < p->net.n_overrides; j++)
			if (policy_cidr__contains(&p->net.overrides[j].endpoint, part))
				break;
		if (j == p->net.n_overrides && hits < sizeof(hit) / sizeof(hit[0]))
			hit[hits++] = e->text;
	}
	if (hits)
		errf(c, n->pos, key,
		     "%s covers the metadata endpoint%s %s; narrow the rule or add %s to network.overrides with a reason",
		     policy_cidr__str(rule, rs, sizeof(rs)), hits > 1 ? "s" : "",
		     list_of(list, sizeof(list), hit, hits, sizeof(*hit), false),
		     hits > 1 ? "them" : "it");
}

static char *get_reason(struct ctx *c, const struct ynode *n, const char *key,
			const char *what);

static void check_rule(struct ctx *c, const struct ynode *n, const char *path,
		       struct policy_net_rule *r, const struct policy *p)
{
	static const struct field f[] = {
		{ "cidr", true }, { "ports", false }, { "proto", false },
		{ "reason", false },
	};
	static const char *const protos[] = { "tcp", "udp", "any" };
	static const uint8_t proto_val[] = {
		NET_PROTO_TCP, NET_PROTO_UDP, NET_PROTO_ANY,
	};
	const struct ynode *v[4];
	char key[PATH_BUF];
	int proto;

	r->pos = n->pos;
	r->proto = NET_PROTO_ANY;
	if (!get_fields(c, n, path, f, 4, v))
		return;
	if (v[0] && get_cidr(c, v[0], join(key, path, "cidr"), &r->cidr))
		check_meta(c, v[0], key, &r->cidr, p);
	if (v[1])
		check_ports(c, v[1], path, r);
	if (v[2] && get_word(c, v[2], join(key, path, "proto"), protos, 3, &proto))
		r->proto = proto_val[proto];
	if (v[3])
		r->reason = get_reason(c, v[3], join(key, path, "reason"),
				       "destination");
}

/* An override's reason: some text besides blanks. `what` it opens. */
static char *get_reason(struct ctx *c, const struct ynode *n, const char *key,
			const char *what)
{
	if (!want_str(c, n, key))
		return NULL;
	if (n->str[strspn(n->str, " \t\r\n")] == '\0') {
		errf(c, n->pos, key, "empty reason; say why this policy needs the %s",
		     what);
		return NULL;
	}
	return xstrdup(c, n->str);
}

static void check_override(struct ctx *c, const struct ynode *n,
			   const char *path, struct policy_net_override *o)
{
	static const struct field f[] = {
		{ "endpoint", true }, { "reason", true },
	};
	const struct ynode *v[2];
	char key[PATH_BUF], list[256], cs[64];
	size_t i;

	o->pos = n->pos;
	if (!get_fields(c, n, path, f, 2, v))
		return;
	if (v[0] && get_cidr(c, v[0], join(key, path, "endpoint"), &o->endpoint)) {
		for (i = 0; i < policy_n_meta_endpoints; i++)
			if (policy_cidr__contains(&policy_meta_endpoints[i].cidr,
						  &o->endpoint))
				break;
		if (i == policy_n_meta_endpoints) {
			errf(c, v[0]->pos, key,
			     "%s is not a built-in metadata endpoint; expected one of (or an address inside): %s",
			     policy_cidr__str(&o->endpoint, cs, sizeof(cs)),
			     list_of(list, sizeof(list), policy_meta_endpoints,
				     policy_n_meta_endpoints,
				     sizeof(*policy_meta_endpoints), false));
			/* Must not excuse a rule in check_meta(). */
			memset(&o->endpoint, 0, sizeof(o->endpoint));
		}
	}
	if (v[1])
		o->reason = get_reason(c, v[1], join(key, path, "reason"),
				       "endpoint");
}

/* ---- paths: files and unix sockets -------------------------------------- */

/* Longest unix_allow entry as written: sun_path less one byte, the
 * terminating NUL of a path or the NUL that stands for '@'. */
#define UNIX_ALLOW_MAX		(UNIX_PATH_MAX_ - 1)

/*
 * A files path (PATH_FILE, PATH_TMPL) or a unix_allow entry (PATH_SOCK): absolute
 * and normalised, or for a socket also "@name"; no control characters (a
 * path is quoted in log records); short enough for the map key it becomes.
 */
enum path_kind {
	PATH_FILE,	/* files.deny, exec paths, overrides */
	PATH_SOCK,	/* network.unix_allow */
	PATH_TMPL,	/* files.read, files.write: may hold {cgroup}... */
};

/*
 * Placeholders (policy/template.c): only where kind allows them, and in
 * such a path every '{' must start a known one, so that a typo such as
 * {cgroups} is an error and not a literal folder nobody has. The length
 * limit applies to the path without them (what they expand to is checked
 * per cgroup: agent/file_rules.c).
 */
static const char *check_placeholders(const struct ynode *n, enum path_kind kind,
				      size_t *fixed)
{
	const char *s = n->str, *b;
	int k;

	*fixed = n->len;
	for (b = strchr(s, '{'); b; b = strchr(b + 1, '{')) {
		k = policy_tmpl__at(b);
		if (k < 0 && kind == PATH_TMPL)
			return "has a '{' that starts no placeholder; the placeholders are {cgroup} and {cgroup_path}";
		if (k < 0)
			continue;
		if (kind != PATH_TMPL)
			return "has a placeholder; {cgroup} and {cgroup_path} are expanded only in files.read and files.write";
		*fixed -= k == POLICY_TMPL_CGROUP ? strlen("{cgroup}") : strlen("{cgroup_path}");
	}
	return NULL;
}

static bool check_path(struct ctx *c, const struct ynode *n, const char *key,
		       enum path_kind kind)
{
	bool sock = kind == PATH_SOCK;
	size_t max = sock ? UNIX_ALLOW_MAX : FILE_PREFIX_MAX, i, fixed = 0;
	char buf[SHOW_BUF + 4];
	const char *why;

	if (!want_str(c, n, key))
		return false;
	for (i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->str[i];

		if (ch < 0x20 || ch == 0x7f) {
			errf(c, n->pos, key,
			     "%s has the control character \\x%02x; remove it",
			     describe(n, buf), ch);
			return false;
		}
	}
	if (sock && n->str[0] == '@')
		why = n->len == 1 ? "is an empty abstract socket name; write @name" : NULL;
	else if (n->str[0] != '/')
		why = sock ? "is neither an absolute path nor an abstract socket name; write /path/to.sock or @name"
			   : "is not an absolute path; write it from '/'";
	else
		why = unnormal(n->str, n->len,
			       "has a '.' or '..' component; write the path without them");
	if (!why && !sock)
		why = check_placeholders(n, kind, &fixed);
	else
		fixed = n->len;
	if (why) {
		errf(c, n->pos, key, "%s %s", describe(n, buf), why);
		return false;
	}
	if (fixed > max) {
		errf(c, n->pos, key, "%s is %zu bytes; %s may have at most %zu",
		     describe(n, buf), fixed,
		     sock ? "a unix socket address (sun_path)" : "a file rule path",
		     max);
		return false;
	}
	return true;
}

/*
 * A policy with per-execution folders has its rules keyed per cgroup too
 * (include/file.h: 8 bytes of cgroup id in the key), so each of its paths
 * may have at most FILE_CG_PREFIX_MAX bytes, a templated one counting one
 * byte at least per placeholder. And a placeholder needs a literal folder
 * above it: /{cgroup} would make a top-level directory (/etc, /proc) of
 * any cgroup named so, and W^X for the folders' family (agent/file_rules.c)
 * would cover the whole filesystem.
 */
static void check_tmpl_list(struct ctx *c, const struct policy_path *v, size_t n,
			    const char *key)
{
	char ikey[PATH_BUF];
	size_t i, len, fixed;
	unsigned int k;

	for (i = 0; i < n; i++) {
		const char *s = v[i].path, *b;

		if (!s)
			continue;
		len = strlen(s);
		fixed = len;
		for (b = strchr(s, '{'); b; b = strchr(b + 1, '{')) {
			k = (unsigned int)policy_tmpl__at(b);
			if (k == POLICY_TMPL_CGROUP)
				fixed -= strlen("{cgroup}") - 1;
			else if (k == POLICY_TMPL_CGROUP_PATH)
				fixed -= strlen("{cgroup_path}") - 1;
		}
		item(ikey, key, i);
		if (fixed > FILE_CG_PREFIX_MAX)
			errf(c, v[i].pos, ikey,
			     "'%.48s%s' is %zu bytes with each placeholder at its shortest; in a policy with {cgroup} or {cgroup_path} a path may have at most %d (its rules are keyed per cgroup too)",
			     s, len > 48 ? "..." : "", fixed, FILE_CG_PREFIX_MAX);
		b = strchr(s, '{');
		while (b && policy_tmpl__at(b) < 0)
			b = strchr(b + 1, '{');
		if (b && !memchr(s + 1, '/', (size_t)(b - s - 1)))
			errf(c, v[i].pos, ikey,
			     "'%.48s%s' has a placeholder in its first component; put it below a folder of its own: /srv/jobs/{cgroup}",
			     s, len > 48 ? "..." : "");
	}
}

static void check_templates(struct ctx *c, const struct policy *p)
{
	size_t i;

	check_tmpl_list(c, p->files.read, p->files.n_read, "files.read");
	check_tmpl_list(c, p->files.write, p->files.n_write, "files.write");
	check_tmpl_list(c, p->files.deny, p->files.n_deny, "files.deny");
	check_tmpl_list(c, p->exec.paths, p->exec.n_paths, "exec.paths");
	for (i = 0; i < p->files.n_overrides; i++) {
		const char *s = p->files.overrides[i].path;
		char ikey[PATH_BUF], pkey[PATH_BUF];

		if (s && strlen(s) > FILE_CG_PREFIX_MAX) {
			item(ikey, "files.overrides", i);
			errf(c, p->files.overrides[i].pos, join(pkey, ikey, "path"),
			     "'%.48s...' is %zu bytes; in a policy with {cgroup} or {cgroup_path} a path may have at most %d",
			     s, strlen(s), FILE_CG_PREFIX_MAX);
		}
	}
}

/*
 * A list of check_path() entries, each at most once, into *out and *count.
 * empty_hint as for get_seq().
 */
static void get_paths(struct ctx *c, const struct ynode *n, const char *key,
		      enum path_kind kind, size_t max, const char *empty_hint,
		      struct policy_path **out, size_t *count)
{
	struct policy_path *v;
	char ikey[PATH_BUF];
	size_t i;

	v = get_array(c, n, key, max, "entries", empty_hint, sizeof(*v));
	if (!v)
		return;
	*out = v;
	*count = n->n;
	for (i = 0; i < n->n; i++) {
		const struct ynode *s = n->kid[i];

		item(ikey, key, i);
		if (!check_path(c, s, ikey, kind) ||
		    listed_twice(c, s, ikey, &v->path, sizeof(*v), &v->pos,
				 sizeof(*v), i))
			continue;
		v[i].path = xstrdup(c, s->str);
		v[i].pos = s->pos;
	}
}

/*
 * network.netlink: netlink protocol names, each once, into a bitmask. An
 * empty list is allowed and means the default (route reads only).
 */
static void check_netlink(struct ctx *c, const struct ynode *n,
			  struct policy *p)
{
	const char *key = "network.netlink";
	char ikey[PATH_BUF], buf[SHOW_BUF + 4], list[400];
	size_t i, nn = 0;
	const char *names[POLICY_NETLINK_MAX];
	int proto;

	p->net.netlink_pos = n->pos;
	if (!get_seq(c, n, key, POLICY_NETLINK_MAX, "entries", NULL))
		return;
	for (i = 0; i < POLICY_NETLINK_MAX; i++)
		if (policy_netlink_names[i])
			names[nn++] = policy_netlink_names[i];
	for (i = 0; i < n->n; i++) {
		const struct ynode *s = n->kid[i];

		item(ikey, key, i);
		if (!want_str(c, s, ikey))
			continue;
		proto = policy_netlink_parse(s->str);
		if (proto < 0) {
			errf(c, s->pos, ikey,
			     "%s is not a netlink family; expected one of %s",
			     describe(s, buf),
			     list_of(list, sizeof(list), names, nn, sizeof(*names),
				     true));
			continue;
		}
		if (p->net.netlink & (1u << proto)) {
			errf(c, s->pos, ikey, "%s is listed twice; remove one",
			     describe(s, buf));
			continue;
		}
		p->net.netlink |= 1u << proto;
	}
}

static void check_network(struct ctx *c, const struct ynode *n,
			  struct policy *p)
{
	static const struct field f[] = {
		{ "default", false }, { "allow", false }, { "raw_sockets", false },
		{ "icmp", false }, { "overrides", false }, { "unix_allow", false },
		{ "listen", false }, { "netlink", false },
	};
	static const char *const defaults[] = { "deny", "allow" };
	const struct ynode *v[8];
	char path[PATH_BUF];
	int def;
	size_t i;

	_Static_assert(sizeof(f) / sizeof(f[0]) <= MAX_FIELDS,
		       "network has more keys than get_fields() takes");
	if (!get_fields(c, n, "network", f, 8, v))
		return;
	if (v[0] && get_word(c, v[0], "network.default", defaults, 2, &def))
		p->net.default_allow = def == 1;
	if (v[2])
		get_bool(c, v[2], "network.raw_sockets", &p->net.raw_sockets);
	if (v[3])
		get_bool(c, v[3], "network.icmp", &p->net.icmp);
	/* Overrides first: the allow rules are checked against them. */
	if (v[4] && (p->net.overrides = get_array(c, v[4], "network.overrides",
						  POLICY_MAX_OVERRIDES, "overrides",
						  "omit overrides when there are none",
						  sizeof(*p->net.overrides)))) {
		p->net.n_overrides = v[4]->n;
		for (i = 0; i < v[4]->n; i++)
			check_override(c, v[4]->kid[i],
				       item(path, "network.overrides", i),
				       &p->net.overrides[i]);
	}
	if (v[1] && (p->net.allow = get_array(c, v[1], "network.allow",
					      POLICY_MAX_NET_RULES, "rules",
					      "omit allow when there are no rules",
					      sizeof(*p->net.allow)))) {
		p->net.n_allow = v[1]->n;
		for (i = 0; i < v[1]->n; i++)
			check_rule(c, v[1]->kid[i], item(path, "network.allow", i),
				   &p->net.allow[i], p);
	}
	if (v[5])
		get_paths(c, v[5], "network.unix_allow", PATH_SOCK,
			  POLICY_MAX_UNIX_ALLOW,
			  "omit unix_allow when no socket outside the sandbox is needed",
			  &p->net.unix_allow, &p->net.n_unix_allow);
	/* Listen rules: the same shape as allow, and the same metadata
	 * check (a bind to a metadata address is refused anyway). */
	if (v[6] && (p->net.listen = get_array(c, v[6], "network.listen",
					       POLICY_MAX_NET_RULES, "rules",
					       "omit listen when the sandbox serves nothing",
					       sizeof(*p->net.listen)))) {
		p->net.n_listen = v[6]->n;
		for (i = 0; i < v[6]->n; i++)
			check_rule(c, v[6]->kid[i], item(path, "network.listen", i),
				   &p->net.listen[i], p);
	}
	if (v[7])
		check_netlink(c, v[7], p);
}

/* Is path equal to prefix or inside it, component-wise (/etc/sudoers.d is
 * not inside /etc/sudoers)? */
static bool inside(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(path, prefix, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

/* Does path lie in a built-in protected path? Home entries are matched
 * under /home/USER here; /root's are in the absolute list. */
static bool is_protected(const char *path)
{
	const char *home;
	size_t i;

	for (i = 0; i < policy_n_protected_paths; i++)
		if (inside(path, policy_protected_paths[i]))
			return true;
	if (strncmp(path, "/home/", 6) != 0 || !(home = strchr(path + 6, '/')))
		return false;
	for (i = 0; i < policy_n_protected_home; i++)
		if (inside(home + 1, policy_protected_home[i]))
			return true;
	return false;
}

/* overrides[i] of files; the earlier ones are checked for the same path. */
static void check_file_override(struct ctx *c, const struct ynode *n,
				const char *path,
				struct policy_file_override *v, size_t i)
{
	static const struct field f[] = {
		{ "path", true }, { "reason", true },
	};
	struct policy_file_override *o = &v[i];
	char key[PATH_BUF], buf[SHOW_BUF + 4];
	const struct ynode *val[2];

	o->pos = n->pos;
	if (!get_fields(c, n, path, f, 2, val))
		return;
	if (val[0] && check_path(c, val[0], join(key, path, "path"), PATH_FILE)) {
		/* The full list would not fit one line; README has it. */
		if (!is_protected(val[0]->str))
			errf(c, val[0]->pos, key,
			     "%s is not a built-in protected path; expected one of those listed in the README, or a path inside one, e.g. /var/run/secrets or /home/USER/.ssh",
			     describe(val[0], buf));
		else if (!listed_twice(c, val[0], key, &v->path, sizeof(*v),
				       &v->pos, sizeof(*v), i))
			o->path = xstrdup(c, val[0]->str);
	}
	if (val[1])
		o->reason = get_reason(c, val[1], join(key, path, "reason"),
				       "path");
}

static void check_files(struct ctx *c, const struct ynode *n, struct policy *p)
{
	static const struct field f[] = {
		{ "read", false }, { "write", false }, { "deny", false },
		{ "overrides", false }, { "preexisting", false },
	};
	static const char *const preexisting[] = {
		[POLICY_PREEXISTING_REPORT] = "report",
		[POLICY_PREEXISTING_KILL] = "kill",
	};
	const struct ynode *v[5];
	char path[PATH_BUF];
	size_t i;
	int word;

	if (!get_fields(c, n, "files", f, 5, v))
		return;
	if (v[4] && get_word(c, v[4], "files.preexisting", preexisting, 2, &word))
		p->files.preexisting = (enum policy_preexisting)word;
	/* An empty read or write list means "nowhere"; an empty deny list
	 * would mean nothing, and is refused like an empty allow list. */
	p->files.has_read = v[0];
	if (v[0])
		get_paths(c, v[0], "files.read", PATH_TMPL, POLICY_MAX_FILE_PATHS,
			  NULL, &p->files.read, &p->files.n_read);
	p->files.has_write = v[1];
	if (v[1])
		get_paths(c, v[1], "files.write", PATH_TMPL, POLICY_MAX_FILE_PATHS,
			  NULL, &p->files.write, &p->files.n_write);
	if (v[2])
		get_paths(c, v[2], "files.deny", PATH_FILE, POLICY_MAX_FILE_PATHS,
			  "omit deny when there are no paths to deny",
			  &p->files.deny, &p->files.n_deny);
	if (v[3] && (p->files.overrides = get_array(c, v[3], "files.overrides",
						    POLICY_MAX_FILE_OVERRIDES,
						    "overrides",
						    "omit overrides when there are none",
						    sizeof(*p->files.overrides)))) {
		p->files.n_overrides = v[3]->n;
		for (i = 0; i < v[3]->n; i++)
			check_file_override(c, v[3]->kid[i],
					    item(path, "files.overrides", i),
					    p->files.overrides, i);
	}
}

/*
 * exec: a list of paths (exec.paths), or a mapping {paths, allow_written,
 * anon_exec, hash}. An empty list is allowed: nothing may be executed, which
 * only a policy whose sandboxes start from a preexisting process needs.
 */
static void check_exec(struct ctx *c, const struct ynode *n, struct policy *p)
{
	static const struct field f[] = {
		{ "paths", false }, { "allow_written", false },
		{ "anon_exec", false }, { "hash", false },
	};
	static const char *const anon_words[] = { "allow", "deny" };
	static const char *const hash_words[] = { "none", "sha256" };
	const struct ynode *v[4];
	int anon, hash;

	p->exec.has = true;
	p->exec.pos = n->pos;
	if (n->type == Y_SEQ) {
		p->exec.has_paths = true;
		get_paths(c, n, "exec", PATH_FILE, POLICY_MAX_EXEC_PATHS, NULL,
			  &p->exec.paths, &p->exec.n_paths);
		return;
	}
	if (!want(c, n, "exec", Y_MAP, "a list of paths or a mapping (paths, allow_written, anon_exec, hash)") ||
	    !get_fields(c, n, "exec", f, 4, v))
		return;
	if (v[0]) {
		p->exec.has_paths = true;
		get_paths(c, v[0], "exec.paths", PATH_FILE, POLICY_MAX_EXEC_PATHS,
			  NULL, &p->exec.paths, &p->exec.n_paths);
	}
	if (v[1]) {
		p->exec.allow_written_pos = v[1]->pos;
		get_bool(c, v[1], "exec.allow_written", &p->exec.allow_written);
	}
	if (v[2] && get_word(c, v[2], "exec.anon_exec", anon_words, 2, &anon))
		p->exec.anon_deny = anon == 1;
	if (v[3] && get_word(c, v[3], "exec.hash", hash_words, 2, &hash))
		p->exec.hash_sha256 = hash == 1;
}

static void check_namespaces(struct ctx *c, const struct ynode *n,
			     struct policy *p)
{
	static const struct field f[] = { { "user", false } };
	const struct ynode *v[1];

	if (get_fields(c, n, "namespaces", f, 1, v) && v[0])
		get_bool(c, v[0], "namespaces.user", &p->namespaces.user);
}

/*
 * capabilities: a list of names (CAP_ optional, any case), each once. An
 * empty list is allowed: root with no capability at all.
 */
static void check_capabilities(struct ctx *c, const struct ynode *n,
			       struct policy *p)
{
	char key[PATH_BUF], buf[SHOW_BUF + 4];
	size_t i;
	int cap;

	if (!get_seq(c, n, "capabilities", POLICY_CAP_LAST + 1, "capabilities",
		     NULL))
		return;
	p->caps.has = true;
	for (i = 0; i < n->n; i++) {
		const struct ynode *s = n->kid[i];

		item(key, "capabilities", i);
		if (!want_str(c, s, key))
			continue;
		cap = policy_cap_parse(s->str);
		if (cap < 0) {
			errf(c, s->pos, key,
			     "unknown capability %s; expected a name from capabilities(7) such as CHOWN or CAP_NET_BIND_SERVICE",
			     describe(s, buf));
			continue;
		}
		if (p->caps.mask & POLICY_CAP_BIT(cap)) {
			errf(c, s->pos, key,
			     "%s is listed twice; first at line %d, column %d",
			     describe(s, buf), p->caps.pos[cap].line,
			     p->caps.pos[cap].col);
			continue;
		}
		p->caps.mask |= POLICY_CAP_BIT(cap);
		p->caps.pos[cap] = s->pos;
	}
}

/* ---- limits: amounts with units ----------------------------------------- */

struct unit {
	const char *name;	/* "" for a bare number */
	uint64_t mult;		/* in the amount's base unit */
};

struct amount {
	const char *what;	/* the type, for "expected ..., got" */
	const struct unit *units;
	size_t n_units;
	bool terms;		/* a sum of terms, "1h30m" */
	uint64_t min, max;	/* min is 0 or 1 */
	/* After the value as written: why it is refused. */
	const char *bad, *fine, *big;
};

enum amount_err { AMOUNT_OK, AMOUNT_BAD, AMOUNT_NEGATIVE, AMOUNT_FINE, AMOUNT_BIG };

static bool push_digit(uint64_t *m, char ch)
{
	unsigned d = (unsigned)(ch - '0');

	if (*m > (UINT64_MAX - d) / 10)
		return false;
	*m = *m * 10 + d;
	return true;
}

/*
 * s as a.units amounts: terms of a decimal number (no sign, no leading
 * zero, an optional fraction) and a unit, the longest of a->units that
 * fits. Only a->terms allows more than one. The result is exact in the
 * base unit: a part finer than 1 is refused, not rounded. A leading '-'
 * is recognised so that the message can say what is wrong with it.
 */
static enum amount_err parse_amount(const char *s, const struct amount *a,
				    uint64_t *out)
{
	unsigned __int128 sum = 0;
	bool neg = *s == '-', fine = false, big = false;
	size_t terms = 0;

	s += neg;
	while (*s || !terms) {
		const struct unit *u = NULL;
		unsigned __int128 scaled, pow = 1;
		unsigned zeros = 0, k = 0, j;
		uint64_t mant = 0;
		bool frac = false;
		size_t i, len;

		if ((terms++ && !a->terms) || *s < '0' || *s > '9' ||
		    (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
			return AMOUNT_BAD;
		for (; (*s >= '0' && *s <= '9') || (*s == '.' && !frac); s++) {
			if (*s == '.') {
				frac = true;
				if (s[1] < '0' || s[1] > '9')
					return AMOUNT_BAD;
			} else if (!frac) {
				big |= !push_digit(&mant, *s);
			} else if (*s == '0') {
				zeros++;	/* trailing zeros change nothing */
			} else {
				for (j = 0; j < zeros; j++)
					fine |= !push_digit(&mant, '0');
				fine |= !push_digit(&mant, *s);
				k += zeros + 1;
				zeros = 0;
			}
		}
		for (i = 0; i < a->n_units; i++) {
			len = strlen(a->units[i].name);
			if (strncmp(s, a->units[i].name, len) == 0 &&
			    (!u || len > strlen(u->name)))
				u = &a->units[i];
		}
		if (!u)
			return AMOUNT_BAD;
		s += strlen(u->name);
		/* mant * mult < 2^104 < 10^32: a nonzero term with more
		 * significant decimals than that is never whole. */
		if (k > 31)
			fine = true;
		if (big || fine)
			continue;
		for (j = 0; j < k; j++)
			pow *= 10;
		scaled = (unsigned __int128)mant * u->mult;
		if (scaled % pow)
			fine = true;
		else if ((sum += scaled / pow) > UINT64_MAX)
			big = true;
	}
	if (neg)
		return AMOUNT_NEGATIVE;
	if (big)
		return AMOUNT_BIG;
	if (fine)
		return AMOUNT_FINE;
	*out = (uint64_t)sum;
	return AMOUNT_OK;
}

static bool get_amount(struct ctx *c, const struct ynode *n, const char *key,
		       const struct amount *a, uint64_t *out)
{
	char buf[SHOW_BUF + 4];
	const char *why;
	uint64_t v = 0;

	if (!want(c, n, key, Y_SCALAR, a->what))
		return false;
	switch (strlen(n->str) != n->len ? AMOUNT_BAD : parse_amount(n->str, a, &v)) {
	case AMOUNT_OK:
		if (v > a->max) {
			why = a->big;
			break;
		}
		if (v < a->min) {
			errf(c, n->pos, key, "must be greater than 0");
			return false;
		}
		*out = v;
		return true;
	case AMOUNT_NEGATIVE:
		errf(c, n->pos, key, "must be %s",
		     a->min ? "greater than 0" : "0 or greater");
		return false;
	case AMOUNT_FINE:
		why = a->fine;
		break;
	case AMOUNT_BIG:
		why = a->big;
		break;
	default:
		why = a->bad;
		break;
	}
	errf(c, n->pos, key, "%s %s", describe(n, buf), why);
	return false;
}

#define UNITS(u)	.units = (u), .n_units = sizeof(u) / sizeof((u)[0])
#define SIZE_AMOUNT(lo) {						\
	.what = "a size", UNITS(size_units), .min = (lo),		\
	.max = UINT64_MAX,						\
	.bad = "is not a size; expected a number with Ki, Mi, Gi, Ti, K, M, G or T", \
	.fine = "is not a whole number of bytes",			\
	.big = "is more than 2^64-1 bytes",				\
}

static void check_limits(struct ctx *c, const struct ynode *n,
			 struct policy_limits *l)
{
	static const struct field f[] = {
		{ "cpu", false }, { "memory", false }, { "memory_swap", false },
		{ "pids", false }, { "runtime", false },
	};
	static const struct unit cpu_units[] = { { "", 1000 }, { "m", 1 } };
	static const struct unit size_units[] = {
		{ "", 1 }, { "K", 1000 }, { "M", 1000000 }, { "G", 1000000000 },
		{ "T", 1000000000000 }, { "Ki", 1ULL << 10 }, { "Mi", 1ULL << 20 },
		{ "Gi", 1ULL << 30 }, { "Ti", 1ULL << 40 },
	};
	static const struct unit count_units[] = { { "", 1 } };
	static const struct unit time_units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};
	static const struct amount a[] = {
		{ .what = "a CPU amount", UNITS(cpu_units), .min = 1,
		  .max = 1024 * 1000,
		  .bad = "is not a CPU amount; expected cores such as 1.5 or millicores such as 500m",
		  .fine = "is finer than 1 millicore; use at most 3 decimals",
		  .big = "is more than 1024 cores" },
		SIZE_AMOUNT(1),
		SIZE_AMOUNT(0),
		/* The kernel refuses pids.max above PID_MAX_LIMIT (64-bit). */
		{ .what = "a number", UNITS(count_units), .min = 1,
		  .max = 4194304,
		  .bad = "is not a whole number; expected a count such as 256",
		  .fine = "is not a whole number; expected a count such as 256",
		  .big = "is more than 4194304, the kernel's limit" },
		{ .what = "a duration", UNITS(time_units), .terms = true,
		  .min = 1, .max = 30ULL * 24 * 3600 * 1000,
		  .bad = "is not a duration; expected a number with ms, s, m or h, such as 30s, 5m or 1h30m",
		  .fine = "is finer than 1 millisecond",
		  .big = "is more than 30 days (720h)" },
	};
	bool *has[] = {
		&l->has_cpu, &l->has_memory, &l->has_memory_swap, &l->has_pids,
		&l->has_runtime,
	};
	uint64_t cpu, *val[] = {
		&cpu, &l->memory, &l->memory_swap, &l->pids, &l->runtime_ms,
	};
	struct policy_pos *pos[] = {
		&l->cpu_pos, &l->memory_pos, &l->memory_swap_pos, &l->pids_pos,
		&l->runtime_pos,
	};
	const struct ynode *v[5];
	char key[PATH_BUF];
	size_t i;

	if (!get_fields(c, n, "limits", f, 5, v))
		return;
	for (i = 0; i < 5; i++) {
		if (!v[i] || !get_amount(c, v[i], join(key, "limits", f[i].name),
					 &a[i], val[i]))
			continue;
		*has[i] = true;
		*pos[i] = v[i]->pos;
	}
	if (l->has_cpu)
		l->cpu_milli = (uint32_t)cpu;
}

/*
 * setup: {pass: auto|on|off, deadline: DURATION}. The deadline bounds how
 * long a runtime's task may go unjudged before its first exec: up to 5
 * minutes, as a pass that long is a window, not a setup.
 */
static void check_setup(struct ctx *c, const struct ynode *n, struct policy *p)
{
	static const struct field f[] = { { "pass", false }, { "deadline", false } };
	static const char *const passes[] = {
		[POLICY_SETUP_AUTO] = "auto", [POLICY_SETUP_ON] = "on",
		[POLICY_SETUP_OFF] = "off",
	};
	static const struct unit time_units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 },
	};
	static const struct amount a = {
		.what = "a duration", UNITS(time_units), .terms = true,
		.min = 1, .max = POLICY_SETUP_DEADLINE_MAX_MS,
		.bad = "is not a duration; expected a number with ms, s or m, such as 10s",
		.fine = "is finer than 1 millisecond",
		.big = "is more than 5 minutes; a setup pass that long is a window",
	};
	const struct ynode *v[2];
	uint64_t ms;
	int pass;

	if (!get_fields(c, n, "setup", f, 2, v))
		return;
	if (v[0] && get_word(c, v[0], "setup.pass", passes, 3, &pass))
		p->setup.pass = (enum policy_setup_pass)pass;
	if (v[1] && get_amount(c, v[1], "setup.deadline", &a, &ms))
		p->setup.deadline_ms = (uint32_t)ms;
}

static void check_policy(struct ctx *c, const struct ynode *root,
			 struct policy *p)
{
	static const struct field f[] = {
		{ "name", true }, { "category", false }, { "mode", false },
		{ "cgroups", false }, { "network", false }, { "files", false },
		{ "namespaces", false }, { "limits", false },
		{ "capabilities", false }, { "perf", false },
		{ "userfaultfd", false }, { "setup", false }, { "exec", false },
		{ "containers", false }, { "pods", false }, { "images", false },
	};
	static const char *const modes[] = {
		[POLICY_ENFORCE] = "enforce", [POLICY_AUDIT] = "audit",
	};
	static const char *const perf_words[] = { "deny", "allow" };
	const struct ynode *v[16];
	int mode, perf;

	p->pos = root->pos;
	if (is_null(root)) {
		errf(c, root->pos, "document",
		     "empty document; expected a policy mapping with name and cgroups");
		return;
	}
	if (!get_fields(c, root, "", f, 16, v))
		return;
	if (!v[3] && !v[13] && !v[14] && !v[15])
		errf(c, root->pos, "cgroups",
		     "required key is missing: a policy selects with cgroups, containers, pods or images (at least one)");
	if (v[0])
		check_name(c, v[0], p);
	if (v[1] && want_str(c, v[1], "category"))
		p->category = xstrdup(c, v[1]->str);
	if (v[2] && get_word(c, v[2], "mode", modes, 2, &mode))
		p->mode = (enum policy_mode)mode;
	if (v[3])
		check_cgroups(c, v[3], p);
	if (v[4])
		check_network(c, v[4], p);
	if (v[5])
		check_files(c, v[5], p);
	if (v[6])
		check_namespaces(c, v[6], p);
	if (v[7])
		check_limits(c, v[7], &p->limits);
	if (v[8])
		check_capabilities(c, v[8], p);
	if (v[9] && get_word(c, v[9], "perf", perf_words, 2, &perf))
		p->perf_allow = perf == 1;
	if (v[10])
		get_bool(c, v[10], "userfaultfd", &p->userfaultfd);
	if (v[11])
		check_setup(c, v[11], p);
	if (v[12])
		check_exec(c, v[12], p);
	if (v[13])
		check_containers(c, v[13], p);
	if (v[14])
		check_pods(c, v[14], p);
	if (v[15])
		check_images(c, v[15], p);
	add_container_globs(c, p);
	if (policy__has_templates(p))
		check_templates(c, p);
}

int policy__parse(const char *file, const char *buf, size_t len,
		  struct policy **out, struct policy_diag *diag)
{
	struct ctx c = { .file = file ? file : "(input)", .diag = diag };
	struct ynode *root = NULL;
	struct policy *p = NULL;
	int err;

	*out = NULL;
	if (len > POLICY_FILE_MAX) {
		err = policy_diag__add(diag, "%s: %zu bytes; a policy file may hold at most %d",
				       c.file, len, POLICY_FILE_MAX);
		return err ? err : -EINVAL;
	}
	err = load_tree(&c, buf, len, &root);
	if (err)
		goto cleanup;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->file = strdup(c.file))) {
		err = -ENOMEM;
		goto cleanup;
	}
	check_policy(&c, root, p);
	err = c.err ? c.err : c.nerr ? -EINVAL : 0;
cleanup:
	sort_diags(&c);
	free(c.placed);
	ynode_free(root);
	if (err) {
		policy__free(p);
		return err;
	}
	*out = p;
	return 0;
}

static void free_paths(struct policy_path *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

void policy__free(struct policy *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n_cgroups; i++)
		free(p->cgroups[i]);
	for (i = 0; i < p->n_ctrs; i++) {
		free(p->ctrs[i].name);
		free(p->ctrs[i].id);
		free(p->ctrs[i].image);
		free(p->ctrs[i].pod);
		free(p->ctrs[i].pod_uid);
		free(p->ctrs[i].ns);
	}
	free(p->ctrs);
	for (i = 0; i < p->net.n_overrides; i++)
		free(p->net.overrides[i].reason);
	for (i = 0; p->net.allow && i < p->net.n_allow; i++)
		free(p->net.allow[i].reason);
	for (i = 0; p->net.listen && i < p->net.n_listen; i++)
		free(p->net.listen[i].reason);
	for (i = 0; i < p->files.n_overrides; i++) {
		free(p->files.overrides[i].path);
		free(p->files.overrides[i].reason);
	}
	free_paths(p->net.unix_allow, p->net.n_unix_allow);
	free_paths(p->files.read, p->files.n_read);
	free_paths(p->files.write, p->files.n_write);
	free_paths(p->files.deny, p->files.n_deny);
	free_paths(p->exec.paths, p->exec.n_paths);
	free(p->files.overrides);
	free(p->cgroups);
	free(p->cgroups_pos);
	free(p->net.allow);
	free(p->net.listen);
	free(p->net.overrides);
	free(p->category);
	free(p->name);
	free(p->file);
	free(p);
}

/* ---- the code register (policy/register.h) ------------------------------ */

/* YYYY-MM-DD (00:00 UTC) or an RFC 3339 time with a zone: epoch s. */
static bool get_date(struct ctx *c, const struct ynode *n, const char *key,
		     int64_t *out)
{
	char buf[SHOW_BUF + 4];
	struct tm tm = { 0 };
	const char *p;
	time_t t;

	if (!want_str(c, n, key))
		return false;
	p = strptime(n->str, "%Y-%m-%d", &tm);
	if (p && *p == 'T') {
		p = strptime(p + 1, "%H:%M:%S", &tm);
		if (p && *p == '.')
			for (p++; *p >= '0' && *p <= '9'; p++)
				;
		if (p && *p == 'Z')
			p++;
		else
			p = NULL;	/* a zone other than Z: write it in UTC */
	}
	if (!p || *p || (t = timegm(&tm)) == (time_t)-1) {
		errf(c, n->pos, key, "expected a date (2026-12-01) or a UTC time (2026-12-01T09:00:00Z), got %s",
		     describe(n, buf));
		return false;
	}
	*out = (int64_t)t;
	return true;
}

static char *dup_str(struct ctx *c, const struct ynode *n, const char *key,
		     bool nonempty)
{
	char *s;

	if (!want_str(c, n, key))
		return NULL;
	if (nonempty && !n->len) {
		errf(c, n->pos, key, "must not be empty");
		return NULL;
	}
	s = strdup(n->str);
	if (!s)
		c->err = -ENOMEM;
	return s;
}

static void check_conditions(struct ctx *c, const struct ynode *n,
			     const char *path, struct register_entry *e)
{
	static const struct field f[] = { { "policies", true }, { "limits", false } };
	static const char *const limit_words[] = { "cpu", "memory", "pids", "runtime" };
	const struct ynode *v[2];
	char kp[PATH_BUF], ip[PATH_BUF];
	size_t i;
	int w;

	if (!get_fields(c, n, path, f, 2, v))
		return;
	if (v[0] && (e->policies = get_array(c, v[0], join(kp, path, "policies"),
					     REGISTER_MAX_ENTRIES, "policies",
					     "name at least one policy (or hash) the category may run under",
					     sizeof(char *)))) {
		e->n_policies = v[0]->n;
		for (i = 0; i < v[0]->n; i++)
			e->policies[i] = dup_str(c, v[0]->kid[i],
						 item(ip, kp, i), true);
	}
	if (v[1] && get_seq(c, v[1], join(kp, path, "limits"), 4, "limits", NULL))
		for (i = 0; i < v[1]->n; i++)
			if (get_word(c, v[1]->kid[i], item(ip, kp, i), limit_words, 4, &w))
				e->limits |= 1u << w;
}

static void check_entry(struct ctx *c, const struct ynode *n, const char *path,
			struct register_entry *e, const struct register_entry *prev,
			size_t n_prev)
{
	static const struct field f[] = {
		{ "category", true }, { "description", true }, { "conditions", true },
		{ "environment", true }, { "approver", true }, { "approved", true },
		{ "expires", false },
	};
	const struct ynode *v[7];
	char kp[PATH_BUF];
	size_t i;

	e->pos = n->pos;
	if (!get_fields(c, n, path, f, 7, v))
		return;
	if (v[0] && (e->category = dup_str(c, v[0], join(kp, path, "category"), true)))
		for (i = 0; i < n_prev; i++)
			if (prev[i].category && !strcmp(prev[i].category, e->category))
				errf(c, v[0]->pos, kp, "category '%s' is listed twice; first at line %d",
				     e->category, prev[i].pos.line);
	if (v[1])
		e->description = dup_str(c, v[1], join(kp, path, "description"), true);
	if (v[2])
		check_conditions(c, v[2], join(kp, path, "conditions"), e);
	if (v[3] && (e->environment = dup_str(c, v[3], join(kp, path, "environment"), true)) &&
	    e->environment[0] != '/')
		errf(c, v[3]->pos, kp, "a cgroup selector starting with '/', as a policy's cgroups: take");
	if (v[4])
		e->approver = dup_str(c, v[4], join(kp, path, "approver"), true);
	if (v[5])
		get_date(c, v[5], join(kp, path, "approved"), &e->approved_s);
	if (v[6] && get_date(c, v[6], join(kp, path, "expires"), &e->expires_s) &&
	    v[5] && e->expires_s <= e->approved_s)
		errf(c, v[6]->pos, kp, "expires before it was approved");
}

bool register__sniff(const char *buf, size_t len)
{
	size_t i = 0;

	/* The first line that is not blank nor a comment, at column 0. */
	while (i < len) {
		size_t e = i;

		while (e < len && buf[e] != '\n')
			e++;
		if (e > i && buf[i] != '#' && buf[i] != ' ' && buf[i] != '\t' &&
		    strncmp(buf + i, "---", 3))
			return e - i >= 8 && !strncmp(buf + i, "entries:", 8);
		i = e + 1;
	}
	return false;
}

int register__parse(const char *file, const char *buf, size_t len,
		    struct code_register **out, struct policy_diag *diag)
{
	static const struct field f[] = { { "entries", true } };
	struct ctx c = { .file = file ? file : "(input)", .diag = diag };
	struct code_register *r = NULL;
	const struct ynode *v[1];
	struct ynode *root = NULL;
	char ip[PATH_BUF];
	size_t i;
	int err;

	*out = NULL;
	err = load_tree(&c, buf, len, &root);
	if (err)
		goto cleanup;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->file = strdup(c.file))) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (get_fields(&c, root, "", f, 1, v) && v[0] &&
	    (r->v = get_array(&c, v[0], "entries", REGISTER_MAX_ENTRIES, "entries",
			      "list each approved category of code", sizeof(*r->v)))) {
		r->n = v[0]->n;
		for (i = 0; i < v[0]->n; i++)
			check_entry(&c, v[0]->kid[i], item(ip, "entries", i), &r->v[i], r->v, i);
	}
	err = c.err ? c.err : c.nerr ? -EINVAL : 0;
cleanup:
	sort_diags(&c);
	free(c.placed);
	ynode_free(root);
	if (err) {
		register__free(r);
		return err;
	}
	*out = r;
	return 0;
}

int register__load(const char *path, struct code_register **out,
		   struct policy_diag *diag)
{
	char why[POLICY_DIAG_MAX], *buf;
	size_t len;
	int err;

	*out = NULL;
	err = policy__read_file(path, &buf, &len, why, sizeof(why));
	if (err) {
		int e2 = policy_diag__add(diag, "%s", why);

		return e2 ? e2 : err;
	}
	err = register__parse(path, buf, len, out, diag);
	free(buf);
	return err;
}

void register__free(struct code_register *r)
{
	size_t i, k;

	if (!r)
		return;
	for (i = 0; i < r->n; i++) {
		struct register_entry *e = &r->v[i];

		free(e->category);
		free(e->description);
		free(e->environment);
		free(e->approver);
		for (k = 0; k < e->n_policies; k++)
			free(e->policies[k]);
		free(e->policies);
	}
	free(r->v);
	free(r->file);
	free(r);
}

const struct register_entry *register__find(const struct code_register *r,
					    const char *category)
{
	size_t i;

	for (i = 0; category && i < r->n; i++)
		if (r->v[i].category && !strcmp(r->v[i].category, category))
			return &r->v[i];
	return NULL;
}
