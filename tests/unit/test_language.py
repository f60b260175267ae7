"""Whether a chunk is in the spaCy model's language (pure logic)."""

from __future__ import annotations

import pytest

from graphrag.ingest.language import foreign

FRENCH = ("Le comité de démolition a tenu une séance publique dans la salle du conseil. Les membres ont "
          "examiné la demande et ils ont accepté le projet avec des conditions pour le patrimoine de la ville.")
GERMAN = ("Ein topologischer Raum ist eine Menge mit einer Topologie. Die offenen Mengen sind die Elemente der "
          "Topologie, und jede Vereinigung von offenen Mengen ist wieder offen, wie man leicht sieht.")
ENGLISH = ("The committee held a public meeting in the council room. The members examined the request and "
           "they accepted the project with conditions for the heritage of the town, as the minutes show.")
CHINESE = "安徽省建设用地使用标准路段的交通量和大型车比例与基准值的编制条件不同时其用地指标按表中的系数进行调整" * 3


@pytest.mark.parametrize("text", [FRENCH, GERMAN, CHINESE])
def test_other_languages_and_scripts_are_foreign_to_an_english_model(text: str) -> None:
    assert foreign(text, "en")


@pytest.mark.parametrize("text", [
    ENGLISH,
    "Short French: le chat est dans la maison.",  # too short to tell
    # a table of codes and figures shares no language's stop words ("Y/Y" is not Spanish "y")
    "| Routes | Dec-2015 | Y/Y | o | RPK | ASK | L/F | JAL | JTA | J-AIR | JAC | RAC | HAC | Pax | Cargo | Mail | "
    "Intl | Dom | Total | Yield | Unit | Rev | Cost | Fuel |",
    "asn1_create_element asn1_delete_structure asn1_read_value asn1_write_value asn1_der_coding "
    "asn1_der_decoding asn1_expand_octet_string asn1_find_node asn1_get_length_der asn1_octet_der "
    "asn1_strerror asn1_perror asn1_print_structure asn1_number_of_elements asn1_find_structure_from_oid",
])
def test_english_and_what_cannot_be_told_are_not(text: str) -> None:
    assert not foreign(text, "en")


def test_a_model_of_another_language_reads_its_own_and_unknown_languages_are_never_foreign() -> None:
    assert not foreign(FRENCH, "fr") and foreign(ENGLISH, "fr")
    assert not foreign(FRENCH, "xx") and not foreign(CHINESE, "zh")


def test_one_function_word_repeated_is_no_language() -> None:
    # Italian lists "inc" as a stop word: a table of company names is not Italian for it.
    rows = " ; ".join(f"Haggen Inc Store Simi Valley Closure Permanent {n}" for n in range(6))
    assert not foreign(rows, "en")
