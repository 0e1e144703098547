"""XML element trees (`xml.etree.ElementTree`, whose `Element` is a C class): what an element holds is text,
read by its C methods (`find`, `findtext`, `get`, iteration) and parsed by the code reading it. Reverse mode
took an element for a C object that may hold a derivative anywhere, and refused every method of it (thermochem's
Burcat database, `element.find("formula")` under a gradient of a heat capacity). An element carries a derivative
only through the values it and its descendants hold (`leaves.register_held_values`): a tree of texts none, a
number stored into one (`el.text = x`, `el.attrib["k"] = x`) makes it a C object holding one again, whose
methods are refused. A text made of a differentiated number and parsed back is refused where it is parsed (the
engines remember such texts).

Loaded when `xml.etree.ElementTree` is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

from xml.etree import ElementTree as _ElementTree

from .leaves import register_held_values

__all__: list[str] = []


def held_values(element) -> list:
    """The values element and its descendants hold that are not text: tags, texts, tails, attribute values
    (an empty list for a parsed document)."""
    found = []
    for node in element.iter():
        for v in (node.tag, node.text, node.tail):
            if v is not None and type(v) is not str:
                found.append(v)
        for _, v in node.items():
            if type(v) is not str:
                found.append(v)
    return found


register_held_values(_ElementTree.Element, held_values)
