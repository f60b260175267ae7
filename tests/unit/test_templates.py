"""Template files (Jinja, Liquid) are told from pages by how much of their visible text is tags."""

from __future__ import annotations

from graphrag.ingest.templates import is_template, template_share

LAYOUT = """{% extends "base.html" %}
{% block site_nav %}{% if nav %}{{ nav.title }}{% endif %}{% endblock %}
Made with {{ config.generator }}
"""

PAGE_ABOUT_TEMPLATES = """# Template inheritance

A child template names its parent with `{% extends "base.html" %}` and fills the blocks it defines.
Outputs such as `{{ user.name }}` are escaped by default.

```jinja
{% extends "base.html" %}
{% block body %}{{ super() }}{% endblock %}
```
"""

LINKS = "Read on:\n\n* [Options]({{ '/docs/options/' | relative_url }})\n* [Defaults]({{ '/docs/defaults/' | relative_url }})\n"


def test_a_layout_is_a_template_and_a_page_about_templates_is_not() -> None:
    assert is_template(LAYOUT) and template_share(LAYOUT) > 0.8
    # examples in code blocks and inline code, and tags in link addresses, are not what a reader sees
    assert template_share(PAGE_ABOUT_TEMPLATES) == 0.0 and not is_template(PAGE_ABOUT_TEMPLATES)
    assert template_share(LINKS) == 0.0
    assert template_share("Hello {{ name }}, welcome.") == 0.0  # one tag: a greeting, not a template
    assert not is_template("Price: {{ price }} per {{ unit }}, paid monthly by every customer of the shop.")


def test_unclosed_openings_are_read_in_linear_time() -> None:
    # Each opening scans at most 2,000 characters for its closing: these finish at once (a pattern that
    # scanned to the end from every opening would take minutes), and none is a template.
    for text in ("{%" * 200_000, "{{ " * 200_000, "{% x " * 100_000 + "%}"):
        assert template_share(text) == 0.0, text[:20]
