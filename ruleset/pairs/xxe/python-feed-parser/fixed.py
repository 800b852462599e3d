def parse_feed(xml_bytes):
    from defusedxml import ElementTree
    root = ElementTree.fromstring(xml_bytes)
    return [item.findtext("title") for item in root.iter("item")]
