/* The language menu keeps the reader on the same page and section (heading ids are the same in
   every language): the link gets the #id of the heading the reader scrolled past last.  Its links
   are already right (partials/alternate.html); this also stops the theme from rewriting them through
   sitemap.xml, which holds the site_url of port 8000 and so sends readers on any other port to the
   other language's home page. */
window.addEventListener("click", function (ev) {
  if (ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey || !(ev.target instanceof Element)) return;
  var link = ev.target.closest("a.md-select__link[hreflang]");
  if (!link) return;
  ev.stopPropagation();
  var target = new URL(link.href, location.href);
  var id = sectionInView();
  target.hash = id ? "#" + encodeURIComponent(id) : "";
  link.href = target.href;
}, true);

/* The section the reader is reading: the last heading of the article above the window's top sixth
   (below the sticky header), whether the reader scrolled there or followed a #link (Material leaves
   a followed heading 3.6rem from the top); none at the top of the page. */
function sectionInView() {
  var header = document.querySelector(".md-header");
  var top = (header ? header.getBoundingClientRect().bottom : 0) + window.innerHeight / 6;
  var found = "";
  var headings = document.querySelectorAll(".md-content article :is(h2, h3, h4, h5, h6)[id]");
  for (var i = 0; i < headings.length; i++) {
    if (headings[i].getBoundingClientRect().top > top) break;
    found = headings[i].id;
  }
  return found;
}

/* Material asks for a sitemap.xml beside every <link rel="alternate"> when the page loads, to rewrite
   the language links (which the handler above makes unnecessary).  The course's alternates are the
   same page in each language (site/hreflang.py), with no sitemap beside them: four requests a page that
   fail and log errors.  They are hidden from the theme's one look-up, made when the document is
   loaded (its listener was added first), and are back right after, for search engines. */
(function () {
  var alternates = document.querySelectorAll("link[rel=alternate][hreflang]");
  alternates.forEach(function (link) { link.setAttribute("rel", "x-course-alternate"); });
  document.addEventListener("DOMContentLoaded", function () {
    alternates.forEach(function (link) { link.setAttribute("rel", "alternate"); });
  }, {once: true});
})();
