def render_comment(comment):
    from django.utils.safestring import mark_safe
    body = comment.body.replace("\n", "<br>")
    return mark_safe("<p class='comment'>" + body + "</p>")
