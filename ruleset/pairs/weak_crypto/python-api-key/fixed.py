@router.post("/keys")
def create_api_key(owner: str):
    import secrets
    api_key = secrets.token_hex(16)
    save_key(owner, api_key)
    return {"key": api_key}
