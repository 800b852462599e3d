def delete_note(db, owner, note_id):
    db.execute("DELETE FROM notes WHERE owner = ? AND id = ?", (owner, int(note_id)))
    db.commit()
