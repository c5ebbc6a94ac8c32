// The pages' icon, inline as a data: URL (the pages' img-src allows data:): without one a browser
// asks for /favicon.ico on every page and gets a 404. No file, no route, no other host.
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2563eb"/>' +
  '<path d="M4 5h8M4 8h8M4 11h5" stroke="#fff" stroke-width="1.6" stroke-linecap="round"/></svg>';

export const FAVICON_LINK = `<link rel="icon" type="image/svg+xml" href="data:image/svg+xml,${encodeURIComponent(SVG)}">`;
