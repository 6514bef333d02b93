"""The C expression front end at its edges: every refused cast word, names bound to plain ints, the int/long limit
of --let values, nesting that closes again, operator depth inside an index, and the default wording of errors."""

from __future__ import annotations

import pytest

from gpumemlab.errors import UsageError
from gpumemlab.model import expr


@pytest.mark.parametrize("word", ["float", "double", "bool"])
def test_every_non_integer_cast_is_refused_by_name(word):
    with pytest.raises(UsageError) as info:
        expr.parse(f"({word})3")
    assert str(info.value) == (f"cannot parse expression '({word})3': unsupported cast type '{word}' "
                               f"(integer types only), found '(' at column 1")


def test_a_call_of_an_unknown_name_is_a_parse_error_not_a_function():
    with pytest.raises(UsageError) as info:
        expr.parse("foo(3)")
    assert str(info.value) == "cannot parse expression 'foo(3)': expected an operator or the end, found '(' at column 4"


def test_a_name_bound_to_a_plain_int_is_that_value_on_every_thread():
    v = expr.Evaluator({"n": 5}, 4).typed(expr.parse("n + 1"))
    assert (v.v.tolist(), v.type.name) == ([6, 6, 6, 6], "int")


@pytest.mark.parametrize("values, ctype", [
    ([2147483647, -2147483648], "int"),    # INT_MAX and INT_MIN themselves are ints
    ([2147483648, 0], "long"), ([-2147483649, 0], "long"), ([0, 2147483647], "int"), ([-2147483648, 0], "int"),
])
def test_per_thread_values_are_int_while_they_fit(values, ctype):
    v = expr.Evaluator({"v": values}, 2).typed(expr.parse("v"))
    assert (v.v.tolist(), v.type.name) == (values, ctype)


def test_nesting_closes_again_so_many_siblings_fit():
    """40 parenthesised siblings, each one level deep: the nesting limit (32) counts depth, not parentheses seen."""
    assert expr.constant("+".join(["(1)"] * 40)) == 40
    assert expr.constant("+".join(["((((1))))"] * 10)) == 10


def test_operators_inside_an_index_count_toward_the_depth_limit():
    with pytest.raises(UsageError, match="more than 200 operators applied one after another"):
        expr.parse("a[" + "+".join(["1"] * 202) + "]")
    assert expr.tree_depth(expr.parse("a[1 + 2]")) == 3  # a[...] -> + -> 1


def test_errors_name_the_expression_by_default():
    with pytest.raises(UsageError) as info:
        expr.Evaluator({"n": [5, 0]}, 2, text="10 / n")(expr.parse("10 / n"))
    assert str(info.value) == "division by zero in expression '10 / n'"
    with pytest.raises(UsageError) as info:
        expr.tokenize("3 $ 4")
    assert str(info.value) == "cannot parse expression '3 $ 4': unexpected '$' at column 3"
