/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A minimal JSON-lines writer for the event stream.
 *
 * Why not json-c: the logger must keep up with ~1M records/s, and json-c
 * builds a heap object tree per record; it also passes invalid UTF-8
 * through unchanged, which makes the line invalid JSON. This writer appends
 * straight into one reusable buffer and guarantees valid JSON: quotes,
 * backslashes and control characters are escaped, and each byte that is
 * not part of valid UTF-8 becomes U+FFFD. Because that loses information,
 * json_str() reports it, and the caller adds the raw bytes as hex in a
 * `<field>_hex` sibling so an assessor can still see exactly what was there.
 */
#ifndef STOCKADE_JSON_H
#define STOCKADE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct json {
	char *buf;
	size_t len, cap;
	bool first;	/* no member written yet in the current object */
	bool oom;	/* an allocation failed: the line is incomplete */
};

void json_init(struct json *j);
void json_free(struct json *j);
/* Start a new object, dropping whatever the buffer held. */
void json_begin(struct json *j);
/* Close the object and append '\n'. */
void json_end(struct json *j);

/*
 * Members. json_str* return true when the value had invalid UTF-8. A key
 * is the program's own field name (printable ASCII, no '"' or '\\'), never
 * data: it is written unescaped. The calls are inline wrappers over the
 * *_k functions, which take the key's length: for a literal key (every
 * call but a few) the compiler folds the strlen away, and a strlen per key
 * was an eighth of the logger's time per record.
 */
bool json_strn_k(struct json *j, const char *key, size_t kn, const char *s,
		 size_t n);
void json_str_raw_k(struct json *j, const char *key, size_t kn, const char *s,
		    size_t n);
void json_name_k(struct json *j, const char *key, size_t kn, const char *name,
		 size_t n);
void json_u64_k(struct json *j, const char *key, size_t kn, uint64_t v);
void json_i64_k(struct json *j, const char *key, size_t kn, int64_t v);
void json_bool_k(struct json *j, const char *key, size_t kn, bool v);
void json_raw_k(struct json *j, const char *key, size_t kn, const char *literal);
void json_str_array_k(struct json *j, const char *key, size_t kn,
		      const char *const *v, size_t n);

static inline bool json_strn(struct json *j, const char *key, const char *s,
			     size_t n)
{
	return json_strn_k(j, key, strlen(key), s, n);
}

static inline bool json_str(struct json *j, const char *key, const char *s)
{
	return json_strn_k(j, key, strlen(key), s, strlen(s));
}

/* A string member whose value is the program's own, never data: a name
 * from one of its tables, or text it formatted from numbers (a time, an
 * address). Written unescaped, like a key; JSON_CHECK_KEYS checks it. */
static inline void json_name(struct json *j, const char *key, const char *name)
{
	json_name_k(j, key, strlen(key), name, strlen(name));
}

/* A string member, plus `<key>_hex` when it was not valid UTF-8. */
static inline void json_str_raw(struct json *j, const char *key, const char *s,
				size_t n)
{
	json_str_raw_k(j, key, strlen(key), s, n);
}

static inline void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_u64_k(j, key, strlen(key), v);
}

static inline void json_i64(struct json *j, const char *key, int64_t v)
{
	json_i64_k(j, key, strlen(key), v);
}

static inline void json_bool(struct json *j, const char *key, bool v)
{
	json_bool_k(j, key, strlen(key), v);
}

/* Literal JSON (already valid), e.g. an array built by the caller. */
static inline void json_raw(struct json *j, const char *key, const char *literal)
{
	json_raw_k(j, key, strlen(key), literal);
}

/* An array of strings. */
static inline void json_str_array(struct json *j, const char *key,
				  const char *const *v, size_t n)
{
	json_str_array_k(j, key, strlen(key), v, n);
}

/* Length (1..4) of the valid UTF-8 sequence at s, or 0 if the bytes there
 * are not one (overlong, surrogate, above U+10FFFF: RFC 3629). */
size_t json_utf8_len(const unsigned char *s, size_t n);

/* Escape s[0..n) into out as a JSON string body (no quotes). */
bool json_escape(struct json *out, const char *s, size_t n);

#endif
