def render_comment(comment):
    from django.utils.html import escape
    from django.utils.safestring import mark_safe
    body = escape(comment.body).replace("\n", "<br>")
    return mark_safe("<p class='comment'>" + body + "</p>")
