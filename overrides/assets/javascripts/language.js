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
