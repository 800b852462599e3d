<?php
function article_by_slug($db, $slug) {
    return $db->query("SELECT title, body FROM articles WHERE slug = '" . $slug . "'")->fetch();
}
