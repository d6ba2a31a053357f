// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void json_init(struct json *j)
{
	memset(j, 0, sizeof(*j));
}

void json_free(struct json *j)
{
	free(j->buf);
	json_init(j);
}

/* Room for n more bytes and the NUL; false once an allocation failed
 * (oom: the rest of the line is dropped, and so is the line). */
static __attribute__((noinline)) bool grow(struct json *j, size_t n)
{
	size_t cap = j->cap ? j->cap : 512;
	char *nb;

	if (j->oom)
		return false;
	while (cap < j->len + n + 1)
		cap *= 2;
	nb = realloc(j->buf, cap);
	if (!nb) {
		j->oom = true;
		return false;
	}
	j->buf = nb;
	j->cap = cap;
	return true;
}

/*
 * Every byte of every record goes through here, about 60 calls a record:
 * inline, with the rare cases (growth, out of memory) out of line.
 */
static inline void put(struct json *j, const char *s, size_t n)
{
	if ((j->oom || j->len + n + 1 > j->cap) && !grow(j, n))
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static inline void putc_(struct json *j, char c)
{
	if ((j->oom || j->len + 2 > j->cap) && !grow(j, 1))
		return;
	j->buf[j->len++] = c;
	j->buf[j->len] = '\0';
}

void json_begin(struct json *j)
{
	j->len = 0;
	j->oom = false;
	j->first = true;
	putc_(j, '{');
}

void json_end(struct json *j)
{
	put(j, "}\n", 2);
}

/*
 * Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there
 * are not one: overlong forms, surrogates and values above U+10FFFF are
 * invalid too (RFC 3629).
 */
size_t json_utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* Bytes that go out as they are: printable ASCII but '"' and '\\'. A
 * table, because every byte of every string of every record is looked up. */
static const unsigned char plain[256] = {
	[0x20 ... 0x21] = 1,	/* 0x22 '"' */
	[0x23 ... 0x5b] = 1,	/* 0x5c '\\' */
	[0x5d ... 0x7e] = 1,
};

bool json_escape(struct json *j, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	bool invalid = false;
	size_t i = 0, run = 0;
	char esc[8];

	while (i < n) {
		unsigned char c = s[i];
		size_t len;

		if (plain[c]) {
			i++;
			run++;
			continue;
		}
		put(j, (const char *)s + i - run, run);
		run = 0;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(j, esc, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" :
					    c == '\r' ? "\\r" : c == '\b' ? "\\b" :
					    c == '\f' ? "\\f" : NULL;

			if (named) {
				put(j, named, 2);
			} else {
				snprintf(esc, sizeof(esc), "\\u%04x", c);
				put(j, esc, 6);
			}
			i++;
		} else if ((len = json_utf8_len(s + i, n - i))) {
			put(j, (const char *)s + i, len);
			i += len;
		} else {
			put(j, "\\ufffd", 6);
			invalid = true;
			i++;
		}
	}
	put(j, (const char *)s + i - run, run);
	return invalid;
}

/*
 * A member's key: written as it is, never escaped. Keys are this program's
 * own field names (string literals, and "<key>_hex"/"<key>_truncated" made
 * from them), never data: json.h says so, and the unit tests' build checks
 * it (JSON_CHECK_KEYS). Escaping them byte by byte, with a strlen and four
 * puts, was a sixth of the logger's time per record (about 20 keys each);
 * json.h's inline wrappers pass the length, a constant for a literal.
 */
static inline void own_text(const char *s, size_t n)
{
#ifdef JSON_CHECK_KEYS
	for (size_t i = 0; i < n; i++)
		if (!plain[(unsigned char)s[i]])
			abort();
#else
	(void)s;
	(void)n;
#endif
}

static void key_(struct json *j, const char *key, size_t n)
{
	char *p;

	own_text(key, n);
	if ((j->oom || j->len + n + 5 > j->cap) && !grow(j, n + 4))
		return;
	p = j->buf + j->len;
	if (!j->first)
		*p++ = ',';
	j->first = false;
	*p++ = '"';
	memcpy(p, key, n);
	p += n;
	*p++ = '"';
	*p++ = ':';
	*p = '\0';
	j->len = (size_t)(p - j->buf);
}

void json_name_k(struct json *j, const char *key, size_t kn, const char *name,
		 size_t n)
{
	key_(j, key, kn);
	own_text(name, n);
	if ((j->oom || j->len + n + 3 > j->cap) && !grow(j, n + 2))
		return;
	j->buf[j->len++] = '"';
	memcpy(j->buf + j->len, name, n);
	j->len += n;
	j->buf[j->len++] = '"';
	j->buf[j->len] = '\0';
}

bool json_strn_k(struct json *j, const char *key, size_t kn, const char *s,
		 size_t n)
{
	bool invalid;

	key_(j, key, kn);
	putc_(j, '"');
	invalid = json_escape(j, s, n);
	putc_(j, '"');
	return invalid;
}

void json_str_raw_k(struct json *j, const char *key, size_t kn, const char *s,
		    size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char hkey[64];
	size_t i;

	if (!json_strn_k(j, key, kn, s, n))
		return;
	if (kn > sizeof(hkey) - sizeof("_hex"))
		kn = sizeof(hkey) - sizeof("_hex");
	memcpy(hkey, key, kn);
	memcpy(hkey + kn, "_hex", sizeof("_hex"));
	key_(j, hkey, kn + sizeof("_hex") - 1);
	putc_(j, '"');
	for (i = 0; i < n; i++) {
		putc_(j, hex[(unsigned char)s[i] >> 4]);
		putc_(j, hex[(unsigned char)s[i] & 15]);
	}
	putc_(j, '"');
}

/* Decimal digits of v, written backwards from end; returns the first.
 * snprintf was a fifth of the logger's time (format parsing, a FILE set
 * up per call) at a few numbers per record. */
static char *u64_digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void json_u64_k(struct json *j, const char *key, size_t kn, uint64_t v)
{
	char num[24], *p = u64_digits(num + sizeof(num), v);

	key_(j, key, kn);
	put(j, p, (size_t)(num + sizeof(num) - p));
}

void json_i64_k(struct json *j, const char *key, size_t kn, int64_t v)
{
	/* The magnitude as unsigned: -INT64_MIN does not fit an int64_t. */
	uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;
	char num[24], *p = u64_digits(num + sizeof(num), mag);

	if (v < 0)
		*--p = '-';
	key_(j, key, kn);
	put(j, p, (size_t)(num + sizeof(num) - p));
}

void json_bool_k(struct json *j, const char *key, size_t kn, bool v)
{
	key_(j, key, kn);
	put(j, v ? "true" : "false", v ? 4 : 5);
}

void json_raw_k(struct json *j, const char *key, size_t kn, const char *literal)
{
	key_(j, key, kn);
	put(j, literal, strlen(literal));
}

void json_str_array_k(struct json *j, const char *key, size_t kn,
		      const char *const *v, size_t n)
{
	size_t i;

	key_(j, key, kn);
	putc_(j, '[');
	for (i = 0; i < n; i++) {
		if (i)
			putc_(j, ',');
		putc_(j, '"');
		json_escape(j, v[i], strlen(v[i]));
		putc_(j, '"');
	}
	putc_(j, ']');
}
