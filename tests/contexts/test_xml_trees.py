"""XML element trees beside differentiated values (`rules.xml_trees`), each mode's own answer against central
differences: a tree of texts is a constant in reverse mode (every method of `xml.etree`'s C `Element` was
refused, thermochem's Burcat database under any gradient, before session 70); a number stored into a tree
makes it a C object holding one, whose reads reverse mode refuses and forward mode follows — never a number
without its derivative."""

import copy
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError

from tests import fd

DOC = ET.fromstring("<r><a v='2.0'>3.0</a><b>1.5</b><c><d k='0.5'/></c></r>")


def read_from_a_document(x):
    a = DOC.find("a")
    d = DOC.find("c/d")
    return float(a.get("v")) * x + float(DOC.findtext("b")) * x * x + float(d.attrib["k"]) * len(list(DOC.iter()))


def looked_up_in_a_loop(x):
    s = 0.0
    for node in DOC:
        for child in node.iter():
            if child.tag == "d":
                s = s + float(child.get("k")) * np.sin(x)
    return s + x * float(DOC[0].text)


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [read_from_a_document, looked_up_in_a_loop])
def test_a_tree_of_texts_is_a_constant(f):
    want = fd.derivative(f, 1.3)
    np.testing.assert_allclose(gradient(f, 1.3)[0], want, rtol=1e-7)
    np.testing.assert_allclose(derivative(f, 1.3), want, rtol=1e-7)


def text_stored(x):
    el = ET.Element("a")
    el.text = x
    return el.text * 2.0


def found_text(x):
    root = ET.fromstring("<r><a/></r>")
    root.find("a").text = x
    return root.findtext("a") * 3.0


def attribute_set(x):
    root = ET.fromstring("<r><a/></r>")
    root.find("a").set("v", x)
    return root.find("a").get("v") * 3.0


def attribute_stored_in_its_dict(x):
    root = ET.fromstring("<r><a/></r>")
    a = root.find("a")
    a.attrib["v"] = x
    return a.get("v") * 3.0 + x


def tree_copied(x):
    root = ET.fromstring("<r><a/></r>")
    root.find("a").text = x
    return copy.deepcopy(root).find("a").text * 3.0


def texts_iterated(x):
    root = ET.fromstring("<r><a/><b/></r>")
    root.find("a").text = x
    root.find("b").text = x * x
    return sum(t * 1.0 for t in root.itertext())


def sub_elements(x):
    root = ET.Element("r")
    for k in range(3):
        e = ET.SubElement(root, "a")
        e.text = x * k
    return sum(e.text for e in root) + sum(e.text for e in root.iter("a"))


def appended(x):
    root = ET.Element("r")
    e = ET.Element("a")
    e.text = x * 2
    root.append(e)
    return root[0].text + len(root)


HOLDING_NUMBERS = [text_stored, found_text, attribute_set, attribute_stored_in_its_dict, tree_copied,
                   texts_iterated, sub_elements, appended]


@pytest.mark.one_mode
@pytest.mark.parametrize("f", HOLDING_NUMBERS)
def test_a_tree_holding_numbers_refused_in_reverse_mode(f):
    # (forward mode's duals are the values the tree holds: followed)
    np.testing.assert_allclose(derivative(f, 1.3), fd.derivative(f, 1.3), rtol=1e-7)
    with pytest.raises(OverdubError):
        gradient(f, 1.3)


def text_parsed_back(x):
    root = ET.fromstring("<r><a/></r>")
    root.find("a").text = str(x)
    return float(root.findtext("a")) * 3.0


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [gradient, derivative])
def test_a_number_written_as_text_and_parsed_back_refused(api):
    with pytest.raises(OverdubError, match="text"):
        api(text_parsed_back, 1.3)


def test_thermochem_burcat_database():
    burcat = pytest.importorskip("thermochem.burcat")
    db = burcat.Elementdb()

    def heat_capacity(share):
        mix = db.getmixturedata([("O2 REF ELEMENT", share), ("N2  REF ELEMENT", 100.0 - share)])
        return mix.cp_(300.0)

    def entropy(t):
        return db.getelementdata("CO2").so(t)

    for f, x in ((heat_capacity, 21.0), (entropy, 500.0)):
        want = fd.derivative(f, x)
        np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-6)
        np.testing.assert_allclose(derivative(f, x), want, rtol=1e-6)


def test_methods_of_heap_c_types_are_keyed_by_class_and_name():
    # (`builtin_method`, the bound methods of C types made by PyType_FromSpec: `re.Pattern`'s on every Python,
    # `xml.etree` Element's since 3.12. Their object went unchecked in reverse mode's call of a C function
    # without a rule: `root.findtext("a")` of a tree holding a differentiated number gave 0 for 3 on 3.12+)
    import re

    from contexts.rules.registry import C_METHOD, key_of
    pattern = re.compile("a")
    assert type(pattern.search) is C_METHOD
    assert key_of(pattern.search) == (re.Pattern, "search")
