/* The language menu keeps the reader on the same page (and section: heading ids are the same in
   every language).  Its links are already right (partials/alternate.html); this stops the theme
   from rewriting them through sitemap.xml, which holds the site_url of port 8000 and so sends
   readers on any other port to the other language's home page. */
window.addEventListener("click", function (ev) {
  if (ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey || !(ev.target instanceof Element)) return;
  var link = ev.target.closest("a.md-select__link[hreflang]");
  if (!link) return;
  ev.stopPropagation();
  var target = new URL(link.href, location.href);
  var id = decodeURIComponent(location.hash.slice(1));
  target.hash = id && document.getElementById(id) ? location.hash : "";
  link.href = target.href;
}, true);

/* Material asks for a sitemap.xml beside every <link rel="alternate"> when the page loads, to rewrite
   the language links (which the handler above makes unnecessary).  The course's alternates are the
   same page in each language (site_hooks.py), with no sitemap beside them: four requests a page that
   fail and log errors.  They are hidden from the theme's one look-up, made when the document is
   loaded (its listener was added first), and are back right after, for search engines. */
(function () {
  var alternates = document.querySelectorAll("link[rel=alternate][hreflang]");
  alternates.forEach(function (link) { link.setAttribute("rel", "x-course-alternate"); });
  document.addEventListener("DOMContentLoaded", function () {
    alternates.forEach(function (link) { link.setAttribute("rel", "alternate"); });
  }, {once: true});
})();
