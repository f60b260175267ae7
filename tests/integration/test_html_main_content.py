"""The article of a web page, found by its prose where landmarks and class names mislead.

Pages shaped like the news and blog pages of the article-extraction benchmarks (a story body inside a
container named "sidebar", two ``<main>`` elements, fifty teaser articles, comments longer than the
post, a consent popup, a page saved as UTF-8 that still declares GB2312), read by the loader and
ingested into the real PostgreSQL and Neo4j.
"""

from __future__ import annotations

from pathlib import Path


from graphrag.ingest.load import Found, load_file
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.search.router import SearchRouter
from tests.helpers import rest_search

STORY = ("<p>The harbour authority of Quellmouth approved the tidal barrier on Monday, after three years of "
         "hearings, two surveys of the estuary and a vote of seven to two.</p>"
         "<p>Engineers expect the barrier to hold back surges of up to four metres, and the first gates will be "
         "installed next spring, the authority said in a statement.</p>"
         "<p>Fishermen, who had opposed the plan, won a promise that the channel will stay open at slack water, "
         "and a fund for boats that must sail the longer way around.</p>")

# The story's body sits in a container whose class names a sidebar layout (Vox Media's pages); a real
# sidebar of links, a "Most popular" list beside the story and a consent popup surround it.
SIDEBAR_LAYOUT = f"""<html><head><title>Quellmouth approves tidal barrier | The Estuary Post</title></head><body>
<div class="m-privacy-consent"><div class="m-privacy-consent__inner"><p>We and our partners use cookies, tracking
pixels and similar technologies to personalise content, measure ads, and improve your experience, as described in
our notice, which you can read at any time, and you can withdraw consent whenever you like.</p></div></div>
<main class="l-wrapper"><article class="l-segment l-main-content">
<h1>Quellmouth approves tidal barrier</h1>
<div class="l-sidebar-fixed l-segment l-article-body"><div class="l-col__main"><div class="c-entry-content">
{STORY}</div></div>
<div class="l-col__sidebar"><ul><li><a href="/a">Sandbar swallows pier</a></li><li><a href="/b">Ferry fares rise</a></li>
<li><a href="/c">Lighthouse for sale</a></li></ul></div></div>
<div class="c-popular"><h2>Most popular</h2><ul><li><a href="/d">Glimmerfin sightings double</a></li>
<li><a href="/e">Tide tables for December</a></li><li><a href="/f">Harbour cat elected mayor</a></li></ul></div>
</article></main></body></html>"""

# A news page's story among teasers, each an <article> with its summary, whose prose outweighs the story's.
TEASER = ("<article class='item'><h3><a href='/t{i}'>Other news {i}</a></h3><p>A summary of another story, number "
          "{i}, long enough to read as a paragraph of prose, with commas, clauses, and more words.</p></article>")
TEASERS_PAGE = (f"<html><head><title>Barrier approved</title></head><body><div class='container'>"
                f"<article class='content content-article'><h1>Barrier approved</h1><section>{STORY}</section></article>"
                f"<div class='more'>{''.join(TEASER.format(i=i) for i in range(30))}</div></div></body></html>")

# A blog post whose comments hold more prose than the post itself.
COMMENT = ("<li class='comment'><p>Reader {i} on the 3rd said: I disagree with the part about the sluice gates, "
           "because the survey from last year, which I read twice, said the opposite of what you wrote.</p></li>")
COMMENTS_PAGE = (f"<html><head><title>Open thread</title></head><body><main><div class='post'><h1>Open thread</h1>"
                 f"<div class='entry-content'>{STORY}</div></div>"
                 f"<div id='comments' class='comments-area'><h3>Comments</h3><ol class='commentlist'>"
                 f"{''.join(COMMENT.format(i=i) for i in range(12))}</ol></div></main></body></html>")


def _read(tmp_path: Path, name: str, data: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    [doc] = load_file(Found(path, "html"), 50 * 1024 * 1024)
    return doc.text


def test_story_in_a_container_named_like_a_sidebar_is_read_and_its_surroundings_are_not(tmp_path: Path) -> None:
    text = _read(tmp_path, "story.html", SIDEBAR_LAYOUT)
    assert "four metres" in text and "slack water" in text  # before: the article body was dropped as a sidebar
    for furniture in ("cookies", "Most popular", "Glimmerfin", "Harbour cat"):
        assert furniture not in text, furniture


def test_the_main_landmark_holding_the_story_is_read(tmp_path: Path) -> None:
    page = (f"<html><body><main class='l-main'><div class='ad-banner'>Advertisement</div></main>"
            f"<main class='l-main'><div class='ap-story'><h1>Barrier</h1>{STORY}</div></main></body></html>")
    text = _read(tmp_path, "two_mains.html", page)
    assert "four metres" in text and "vote of seven to two" in text


def test_an_article_that_is_a_photo_box_is_not_the_page(tmp_path: Path) -> None:
    page = (f"<html><body><div role='main'><article class='story-photo-box'><img alt='The estuary at dawn' "
            f"src='a.jpg'><p>Photo: the estuary.</p></article><div class='entry-content'>{STORY}</div></div></body></html>")
    text = _read(tmp_path, "photo_box.html", page)
    assert "four metres" in text and "The estuary at dawn" in text


def test_story_among_teaser_articles_is_read_without_them(tmp_path: Path) -> None:
    text = _read(tmp_path, "teasers.html", TEASERS_PAGE)
    assert "four metres" in text and "Other news" not in text


def test_a_list_of_teasers_is_not_a_story(tmp_path: Path) -> None:
    """A "You may like" block, itself an <article> of teaser articles, beside the post: the post stays."""
    teasers = "".join(TEASER.format(i=i) for i in range(8))
    page = (f"<html><body><div class='columns'><article class='fundo articlebox post'><h1>Barrier</h1>{STORY}</article>"
            f"<article class='fundo postbox post'><h3>You may like</h3>{teasers}</article></div></body></html>")
    assert "four metres" in _read(tmp_path, "listing.html", page)


def test_comments_longer_than_the_post_are_left_out(tmp_path: Path) -> None:
    text = _read(tmp_path, "thread.html", COMMENTS_PAGE)
    assert "four metres" in text and "sluice gates" not in text


def test_an_article_in_a_layout_named_sidebar_is_read_when_names_leave_too_little(tmp_path: Path) -> None:
    """Class names first ("theiaStickySidebar" is a sidebar): where that finds too little prose, without them."""
    page = (f"<html><body><div class='container penci_sidebar'><div class='theiaStickySidebar'><article class='post'>"
            f"<h1>Barrier</h1><div class='post-entry'>{STORY}</div></article></div></div>"
            f"<div class='penci-gprd-law'><p>This site uses cookies to improve your experience.</p></div></body></html>")
    assert "four metres" in _read(tmp_path, "sticky.html", page)


def test_a_document_without_landmarks_keeps_every_section(tmp_path: Path) -> None:
    """A page of sections (pandoc's, a saved manual): its sections beside the densest one are the document."""
    long = "".join(f"<p>Step {i}: turn the valve, wait for the gauge, and note the pressure, in bar.</p>" for i in range(20))
    page = (f"<html><body><section id='setup'><h2>Setup</h2>{long}</section>"
            f"<section id='care'><h2>Care</h2><p>Grease the zorbatite hinges once a year, or after a storm.</p></section>"
            f"</body></html>")
    text = _read(tmp_path, "manual.html", page)
    assert "## Setup" in text and "zorbatite hinges" in text


def test_a_manuals_lists_of_links_under_headings_are_kept(tmp_path: Path) -> None:
    """On a page of sections, a list of links beside the densest section is the page's content."""
    links = "".join(f"<li><a href='r{i}.html'>Release 9.{i}</a></li>" for i in range(6))
    page = (f"<html><body><div role='main'><section id='changelog'><h1>Changelog</h1>"
            f"<section id='latest'><h2>Release 10</h2><ul><li><p>{STORY}</p></li></ul></section>"
            f"<section id='prior'><h2>Prior releases</h2><ul>{links}</ul></section></section></div></body></html>")
    text = _read(tmp_path, "changes.html", page)
    assert "Release 9.5" in text and "four metres" in text


def test_a_page_in_utf8_declaring_a_legacy_charset_is_read(tmp_path: Path) -> None:
    page = ("<html><head><meta http-equiv='Content-Type' content='text/html; charset=gb2312'>"
            "<title>潮汐屏障获批</title></head><body><div><p>港务局周一批准了潮汐屏障，经过三年的听证会和两次河口调查。"
            "工程师预计屏障能抵御高达四米的风暴潮。</p></div></body></html>")
    text = _read(tmp_path, "gb.html", page.encode("utf-8"))
    assert "港务局周一批准了潮汐屏障" in text  # before: decoded as GB2312, the page read as nothing


def test_mediawiki_edit_links_are_not_part_of_headings(tmp_path: Path) -> None:
    page = ("<html><body><div id='content' class='mw-body' role='main'><h1 id='firstHeading'>Tidal barrier</h1>"
            "<div id='siteSub' class='noprint'>From Wikipedia, the free encyclopedia</div>"
            "<div id='bodyContent'><h2><span class='mw-headline' id='History'>History</span>"
            "<span class='mw-editsection'><span class='mw-editsection-bracket'>[</span><a href='?action=edit'>edit</a>"
            f"<span class='mw-editsection-bracket'>]</span></span></h2>{STORY}</div>"
            "<div class='printfooter'>Retrieved from \"https://en.wikipedia.org/w/index.php?title=Tidal_barrier\"</div>"
            "</div></body></html>")
    text = _read(tmp_path, "wiki.html", page)
    assert "## History\n" in text and "[edit]" not in text and "edit" not in text.split("\n")[2]
    assert "free encyclopedia" not in text and "Retrieved from" not in text


def test_a_story_in_divs_of_spans_is_found(tmp_path: Path) -> None:
    """A chapter written as divs of spans (no <p>): each long div is a paragraph of the story."""
    para = ("<div style='direction: ltr'><span>Alden looked at the harbour, where the barrier's first gate rose out "
            "of the water, grey and slow, and he thought about the survey he had read twice.</span></div>")
    page = (f"<html><body><div class='page'><div class='portlet author-note-portlet'><div class='author-note'>"
            f"<p>Thanks for reading, see you next week, and leave a comment if you like it.</p></div></div>"
            f"<div class='chapter-inner chapter-content'>{para * 6}</div></div></body></html>")
    assert "first gate rose out" in _read(tmp_path, "chapter.html", page)


def test_an_essay_laid_out_in_a_one_cell_table_reads_as_paragraphs(tmp_path: Path) -> None:
    """Paul Graham's essays sit in a one-cell table inside a layout table, paragraphs split by <br><br>;
    they read as one pipe-table cell holding the whole essay before (stop 53)."""
    page = ("<html><head><title>Tides</title></head><body><table><tr><td><img src='nav.gif'></td><td>"
            "<table width=435><tr><td><font size=2>January 2023<br><br>The tide comes in twice a day, "
            "which every harbour master knows.<br><br>The Quellmouth barrier closes at four metres.</font>"
            "</td></tr></table></td></tr></table></body></html>")
    text = _read(tmp_path, "essay.html", page)
    assert text == ("January 2023\n\nThe tide comes in twice a day, which every harbour master knows.\n\n"
                    "The Quellmouth barrier closes at four metres.")
    one_column = "<html><body><main><table><tr><th>Berths</th></tr><tr><td>North</td></tr></table></main></body></html>"
    assert _read(tmp_path, "list.html", one_column) == "Berths\n\nNorth"


def _title(tmp_path: Path, page: str) -> str:
    path = tmp_path / "page.html"
    path.write_text(page)
    [doc] = load_file(Found(path, "html"), 1 << 20)
    return doc.title


def test_a_pages_title_loses_its_sites_name(tmp_path: Path) -> None:
    """Without an <h1> in the article: the <title>'s part that is the page's og:title, else the <title>
    less the part that is the site's name (og:site_name); never the banner's <h1>, the site's name."""
    story = f"<div class='story'>{STORY}</div>"
    own = ("<html><head><title>Barrier approved for Quellmouth | The Estuary Post</title><meta property='og:title' "
           f"content='Barrier approved for Quellmouth'></head><body><header><h1>The Estuary Post</h1></header>"
           f"{story}</body></html>")
    assert _title(tmp_path, own) == "Barrier approved for Quellmouth"
    site = ("<html><head><title>Tidal barrier approved - The Estuary Post</title>"
            f"<meta property='og:site_name' content='The Estuary Post'></head><body>{story}</body></html>")
    assert _title(tmp_path, site) == "Tidal barrier approved"
    banner = (f"<html><head><title>Tidal barrier approved | The Estuary Post</title></head>"
              f"<body><div class='menu-bar'><h1>The Estuary Post</h1></div>{story}</body></html>")
    assert _title(tmp_path, banner) == "Tidal barrier approved | The Estuary Post"  # nothing says which part


def test_two_line_breaks_in_a_paragraph_end_it(tmp_path: Path) -> None:
    page = ("<html><body><main><p>The gauge reads hourly.<br>\n<br>The barrier closes at four metres.<br>At "
            "slack water it opens.</p><blockquote>One quote.<br><br>Another.</blockquote></main></body></html>")
    assert _read(tmp_path, "breaks.html", page) == (
        "The gauge reads hourly.\n\nThe barrier closes at four metres. At slack water it opens.\n\n"
        "> One quote.\n\n> Another.")


def test_an_images_address_as_its_alt_text_is_not_a_description(tmp_path: Path) -> None:
    page = ("<html><body><main><p>The gauge.</p><img alt='[https://img.example/clip_167x94.jpg]' "
            "src='https://img.example/clip_167x94.jpg'><img alt='A gauge reading four metres' src='g.png'></main></body></html>")
    text = _read(tmp_path, "img.html", page)
    assert "clip_167x94" not in text and "![A gauge reading four metres](g.png)" in text


async def test_web_pages_store_their_story_and_not_their_surroundings(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "story.html").write_text(SIDEBAR_LAYOUT)
    (tmp_path / "teasers.html").write_text(TEASERS_PAGE)
    (tmp_path / "thread.html").write_text(COMMENTS_PAGE)
    (tmp_path / "essay.html").write_text(
        "<html><head><title>Tides</title></head><body><table width=435><tr><td><font>The tide comes in twice a "
        "day.<br><br>The Marrowgate gauge reads it hourly.</font></td></tr></table></body></html>")
    (tmp_path / "ferry.html").write_text(
        "<html><head><title>Ferry service resumes - The Estuary Post</title><meta property='og:site_name' "
        "content='The Estuary Post'></head><body><div><p>The Vantorel ferry resumes its crossings on Friday, after "
        "a month of repairs to its hull and engines, the operator said.<br><br>Tickets go on sale on Monday."
        "</p></div></body></html>")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (5, [])
    [ferry] = (await rest_search(router, "Vantorel ferry", mode="keyword", limit=3, collections=[collection]))["results"]
    assert ferry["title"] == "Ferry service resumes", ferry  # the site's name is not the document's
    assert "the operator said.\n\nTickets go on sale" in ferry["content"], ferry  # <br><br> ends a paragraph
    [essay] = (await rest_search(router, "Marrowgate gauge", mode="keyword", limit=3, collections=[collection]))["results"]
    assert essay["content"] == "The tide comes in twice a day.\n\nThe Marrowgate gauge reads it hourly.", essay
    response = await rest_search(router, "slack water fishermen", mode="keyword", limit=5, collections=[collection])
    assert sorted(r["title"] for r in response["results"]) == [
        "Barrier approved", "Open thread", "Quellmouth approves tidal barrier"]
    for term in ("Glimmerfin", "pixels", "disagree", "summary"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert response["results"] == [], term
    rows = await runtime.postgres.pool.fetch("SELECT content FROM chunks WHERE collection = $1", collection)
    assert not [r for r in rows if "Most popular" in r["content"] or "Reader 3" in r["content"]]
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name", c=collection)
    names = {r["name"] for r in rows}
    assert "Quellmouth" in names and "Glimmerfin" not in names
