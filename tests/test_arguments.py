"""The Python API refuses wrong arguments before any work, naming the argument and what it takes
(onparse.arguments): a str, bytes or a mapping given as a list of sentences, bytes as a sentence,
an empty token, a str where a list or an int goes; odd characters of input text through the API."""
import pytest

import onparse
from conftest import save_tiny_checkpoint

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat down on a mat dog barked N times and then it was quiet".split()


@pytest.fixture(scope="module")
def parser(tmp_path_factory):
    path = save_tiny_checkpoint(tmp_path_factory.mktemp("model") / "tiny.pt", WORDS, seed=3)[2]
    return onparse.load(path, "cpu")


@pytest.mark.parametrize("given, named", [("The cat sat", "not a str"), (b"The cat sat", "not a bytes"),
                                          ({"a": 1}, "not a dict"), (bytearray(b"cat"), "not a bytearray")])
def test_batch_refuses_a_str_bytes_or_a_mapping(parser, given, named):
    # A str was parsed character by character (one tree per letter), a dict by its keys.
    for method in (parser.batch, lambda s: list(parser.parse_sents(s))):
        with pytest.raises(TypeError, match=f"takes a list \\(or any iterable\\) of sentences.*{named}") as err:
            method(given)
        assert isinstance(err.value, onparse.OnparseError)
    assert [t.leaves() for t in parser.batch(("the cat sat", ["a", "dog"]))] == [["the", "cat", "sat"], ["a", "dog"]]
    assert [t.leaves() for t in parser.batch(iter(["the cat sat"]))] == [["the", "cat", "sat"]]


def test_a_sentence_of_bytes_is_a_type_error_that_says_to_decode(parser):
    # It was "'int' object has no attribute 'isascii'".
    with pytest.raises(TypeError, match=r"sentence must be a str of raw text or a list of str tokens, not bytes: "
                                        r"decode it first"):
        parser.parse_one(b"The cat sat")
    with pytest.raises(TypeError, match="token 2 is a int; a token list holds str tokens"):
        parser.parse_one(["the", 3])
    with pytest.raises(TypeError, match="must be a str of raw text or a list of str tokens, not int"):
        parser.tokens([5])


@pytest.mark.parametrize("tokens, what", [(["The", "", "sat"], "token 2 is empty"),
                                          (["The", " \t", "sat"], "token 2 is only whitespace")])
def test_an_empty_token_is_refused(parser, tokens, what):
    with pytest.raises(ValueError, match=what):
        parser.parse_one(tokens)
    with pytest.raises(ValueError, match=what):
        parser.batch([["the", "cat"], tokens])


def test_arguments_of_the_wrong_type_name_themselves(parser, tmp_path):
    with pytest.raises(TypeError, match=r"layer must be an int, not str \('2'\)"):     # was "layer 2 does not exist"
        parser.distances("the cat sat", layer="2")
    with pytest.raises(ValueError, match="model must be at least 0 and at most 0, got 3"):
        parser.distances("the cat sat", model=3)
    with pytest.raises(ValueError, match="unknown gate 'sideways'; choose from forget, input"):
        parser.distances("the cat sat", gate="sideways")
    with pytest.raises(ValueError, match="unknown punct 'keep'; choose from vocab, drop"):
        parser.tokens(["the cat"], punct="keep")
    assert parser.distances("the cat sat", layer=1).shape == (3,)
    path = save_tiny_checkpoint(tmp_path / "m.pt", WORDS)[2]
    with pytest.raises(TypeError, match=r"voters takes a list such as \['right'\], not a str \('right'\)"):
        onparse.load(path, voters="right")                 # was "unknown voter 'r'"
    with pytest.raises(TypeError, match=r"layers takes a list such as \[2, 3\] or 'all', not a int \(2\)"):
        onparse.load(path, layers=2)
    with pytest.raises(TypeError, match=r"layers takes a list of ints such as \[2, 3\]; '2' is a str"):
        onparse.load(path, layers=["2"])
    with pytest.raises(TypeError, match="batch_size must be an int, not float"):
        onparse.load(path, batch_size=2.5)
    with pytest.raises(TypeError, match="model takes a list such as"):
        onparse.load(b"m.pt")
    assert onparse.load(path, voters=("right",), layers=[1, 2]).voters == ("right",)


def test_load_corpus_of_a_path_says_what_it_takes():
    # It was AttributeError: 'str' object has no attribute 'source'.
    with pytest.raises(TypeError, match=r"spec must be a CorpusSpec, not str \('path'\): onparse.corpus_spec\(path\)"):
        onparse.load_corpus("path")


def test_a_byte_order_mark_is_dropped_and_a_nul_refused_through_the_api(parser):
    assert parser.parse_one("\ufeffThe cat sat").leaves() == ["The", "cat", "sat"]
    assert parser.tokens(["\ufeffThe cat"]) == [["The", "cat"]]
    with pytest.raises(ValueError, match="sentence holds a NUL character"):
        parser.parse_one("The c\x00at sat")
    with pytest.raises(ValueError, match="token 2 holds a NUL character"):
        parser.parse_one(["The", "c\x00at"])
