@router.post("/keys")
def create_api_key(owner: str):
    import random
    api_key = "%032x" % random.getrandbits(128)
    save_key(owner, api_key)
    return {"key": api_key}
