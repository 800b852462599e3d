"""The taint step on C and C++ (memory flows) and the tests a function makes (``delta.tests``), on
hand-written functions in the shape of vulnerable/fixed pairs: the fix adds a bounds check, a null check
after a lookup, or clears a freed pointer."""

from __future__ import annotations

import pytest

from ouroboros_gates.decider.instruments.guards import count_tests
from ouroboros_gates.decider.languages import parse_source

VULNERABLE = """#include <string.h>

int put(char *dst, const char *src, size_t len, int slot) {
    char *entry = lookup(dst);
    entry->used = 1;
    memcpy(dst, src, len);
    dst[slot] = 0;
    free(entry);
    return 0;
}
"""

FIXED = """#include <string.h>

int put(char *dst, const char *src, size_t len, int slot) {
    char *entry = lookup(dst);
    if (entry == NULL || len > 64 || slot >= 64)
        return -1;
    entry->used = 1;
    memcpy(dst, src, len);
    dst[slot] = 0;
    free(entry);
    entry = NULL;
    return 0;
}
"""


def _flows(source: str, language: str = "c") -> set[tuple[str, str, int, bool]]:
    item = parse_source(f"f.{language}", language, source.encode())
    return {(f.operation, f.source_kind, f.sink_line, f.sanitized) for f in item.flows}


def test_parameters_reaching_a_copy_an_index_a_free_and_an_unchecked_lookup_are_live_flows() -> None:
    assert _flows(VULNERABLE) == {
        ("memory_deref", "other", 5, False),
        ("memory_copy", "parameter", 6, False),
        ("memory_index", "parameter", 7, False),
        ("memory_free", "parameter", 8, False),  # entry is derived from dst
    }


def test_the_fix_tests_what_it_uses_and_clears_what_it_frees() -> None:
    flows = _flows(FIXED)
    assert ("memory_copy", "parameter", 8, True) in flows and ("memory_index", "parameter", 9, True) in flows
    assert not any(op == "memory_deref" for op, *_ in flows)
    assert not any(not sanitized for *_, sanitized in flows)


def test_a_freed_parameter_is_live_until_it_is_set_to_null() -> None:
    code = "void drop(struct node *n) {\n    free(n->name);\n    free(n);\n}\n"
    assert ("memory_free", "parameter", 3, False) in _flows(code)
    assert ("memory_free", "parameter", 3, True) in _flows(
        code.replace("free(n);", "free(n);\n    n = NULL;")
    )


def test_cpp_reads_the_c_vocabulary_and_follows_locals_and_pointer_sums() -> None:
    code = (
        "int Buffer::at(std::vector<int>& v, int n) {\n    int i = n + 1;\n    int *p = new int[4];\n"
        "    *(p + i) = v[i];\n    delete[] p;\n    return 0;\n}\n"
    )
    flows = _flows(code, "cpp")
    assert ("memory_index", "parameter", 4, False) in flows
    assert not any(op == "memory_free" for op, *_ in flows)  # p is not derived from a parameter


def test_constants_and_locals_of_no_parameter_make_no_flow() -> None:
    code = "int f(void) {\n    char buf[8];\n    buf[3] = 0;\n    memset(buf, 0, 8);\n    return 0;\n}\n"
    assert _flows(code) == set()


@pytest.mark.parametrize(
    ("language", "source", "tests"),
    [
        (
            "c",
            "int f(int n, char *p) {\n  if (n >= 16 || !p) return -1;\n  while (n && p[n]) n--;\n"
            "  for (;;) {}\n  return n > 3 ? 1 : 0;\n}\n",
            5,
        ),
        ("cpp", "void f(int y) { if (auto x = g(); x > 1 && y) {} }", 2),
        (
            "python",
            "def f(x):\n    if x is None or (len(x) > 3 and x[0]):\n        raise ValueError\n"
            "    elif not x:\n        pass\n    assert x != 1\n    return 1 if x else 2\n",
            6,
        ),
        (
            "java",
            "class A { void f(String s) {\n  if (s == null || s.isEmpty()) return;\n"
            "  int a = s.length() > 3 ? 1 : 2;\n} }",
            3,
        ),
    ],
)
def test_count_tests_counts_the_atomic_conditions(language: str, source: str, tests: int) -> None:
    assert count_tests(language, source) == tests


def test_an_index_needs_a_size_comparison_first_a_null_test_does_not_bound_it() -> None:
    code = "int get(int *table, int n) {\n    if (!n)\n        return 0;\n    return table[n];\n}\n"
    assert _flows(code) == {("memory_index", "parameter", 4, False)}
    assert _flows(code.replace("(!n)", "(n >= 16)")) == {("memory_index", "parameter", 4, True)}


def _live(source: str, language: str = "c") -> set[tuple[str, int]]:
    return {(op, line) for op, _, line, sanitized in _flows(source, language) if not sanitized}


def test_a_bounds_check_bounds_the_field_it_compares_not_its_neighbours() -> None:
    code = (
        "int put(struct hdr *h, char *dst) {\n    if (h->count > 8)\n        return -1;\n"
        "    memcpy(dst, h->data, h->len);\n    return 0;\n}\n"
    )
    assert _live(code) == {("memory_copy", 4)}
    assert _live(code.replace("h->count > 8", "h->len > 8")) == set()
    assert _live(code.replace("h->count > 8", "h->count > 8 || h->len >= sizeof(h->data)")) == set()


def test_a_checking_macro_and_a_clamp_bound_a_size() -> None:
    code = (
        "int put(char *dst, const char *src, size_t len) {\n    CHECK_RETURN(len > 64, -1);\n"
        "    memcpy(dst, src, len);\n    return 0;\n}\n"
    )
    assert _live(code) == set()
    assert _live(code.replace("CHECK_RETURN(len > 64, -1);", "log_len(len);")) == {("memory_copy", 3)}
    clamped = "void put(char *dst, const char *src, size_t len) {\n    memcpy(dst, src, MIN(len, 64));\n}\n"
    assert _live(clamped) == set()


def test_values_read_from_memory_or_a_call_are_inputs_and_named_wrappers_are_sinks() -> None:
    code = (
        "void next(void) {\n    struct hdr *h = read_header();\n    size_t n = h->len;\n"
        "    char *out = _TIFFmalloc(n);\n    _TIFFmemcpy(out, h->data, n);\n}\n"
    )
    assert _live(code) == {("memory_alloc", 4), ("memory_copy", 5), ("memory_deref", 3), ("memory_deref", 5)}
    checked = code.replace("    char *out", "    if (!h || n > 4096)\n        return;\n    char *out")
    assert _live(checked) == {("memory_deref", 3)}  # h was dereferenced before its test


def test_a_copy_into_a_pointer_sum_writes_at_an_index() -> None:
    code = "void put(char *buf, const char *src, int off) {\n    memcpy(buf + off, src, 4);\n}\n"
    assert _live(code) == {("memory_copy", 2)}
    assert _live(code.replace("    memcpy", "    if (off > 60) return;\n    memcpy")) == set()


def test_a_cast_allocation_is_a_result_to_test_before_it_is_dereferenced() -> None:
    code = "void make(void) {\n    struct s *p = (struct s *) malloc(sizeof(*p));\n    p->x = 1;\n}\n"
    assert _live(code) == {("memory_deref", 3)}
    assert _live(code.replace("    p->x", "    if (!p) return;\n    p->x")) == set()


def test_a_read_after_free_on_a_path_that_goes_on_is_a_use_after_free() -> None:
    code = (
        "int drop(struct list *l, struct node *n) {\n    free(n);\n    l->last = n->next;\n    return 0;\n}\n"
    )
    assert ("memory_use_after_free", 3) in _live(code)
    assert not any(op == "memory_use_after_free" for op, _ in _live(code.replace("    free(n);\n", "") + ""))
    reordered = (
        "int drop(struct list *l, struct node *n) {\n    l->last = n->next;\n    free(n);\n    return 0;\n}\n"
    )
    assert not any(op == "memory_use_after_free" for op, _ in _live(reordered))
    reassigned = code.replace("    l->last", "    n = l->head;\n    l->last")
    assert not any(op == "memory_use_after_free" for op, _ in _live(reassigned))
    leaving = (
        "int drop(struct list *l, struct node *n, int err) {\n    if (err) {\n        free(n);\n        "
        "return -1;\n"
        "    }\n    l->last = n->next;\n    return 0;\n}\n"
    )
    assert not any(op == "memory_use_after_free" for op, _ in _live(leaving))


def test_a_copy_into_a_buffer_allocated_with_the_copys_own_size_fits() -> None:
    source = """#include <stdlib.h>
#include <string.h>

unsigned char *dup(const unsigned char *string, size_t room) {
    size_t length = strlen((const char *)string) + 1;
    unsigned char *copy = (unsigned char *)malloc(length);
    unsigned char *small = malloc(16);
    memcpy(copy, string, length);
    memcpy(small, string, length);
    return copy;
}
"""
    copies = {
        (line, sanitized) for operation, _, line, sanitized in _flows(source) if operation == "memory_copy"
    }
    assert copies == {(8, True), (9, False)}


def test_an_allocation_of_strings_lengths_is_sized_by_what_exists_a_header_length_is_not() -> None:
    source = """#include <stdlib.h>
#include <string.h>

char *join(const char *a, const char *b, struct hdr *h) {
    char *out = malloc(strlen(a) + strlen(b) + sizeof(""));
    char *raw = malloc(h->len + 1);
    return out;
}
"""
    allocations = {
        (line, sanitized) for operation, _, line, sanitized in _flows(source) if operation == "memory_alloc"
    }
    assert allocations == {(5, True), (6, False)}


def test_a_comment_before_the_freed_pointer_still_frees_it() -> None:
    code = (
        "int drop(struct list *l, struct node *n) {\n"
        "    free(/* the node */ n);\n    l->last = n->next;\n    return 0;\n}\n"
    )
    assert ("memory_use_after_free", 3) in _live(code)
