def parse_feed(xml_bytes):
    from lxml import etree
    parser = etree.XMLParser(resolve_entities=True)
    root = etree.fromstring(xml_bytes, parser)
    return [item.findtext("title") for item in root.iter("item")]
