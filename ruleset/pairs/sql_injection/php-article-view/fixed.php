<?php
function article_by_slug($db, $slug) {
    $stmt = $db->prepare("SELECT title, body FROM articles WHERE slug = :slug");
    $stmt->execute(['slug' => $slug]);
    return $stmt->fetch();
}
