// The lowest contrast between any visible text on the page and the background behind it
// (WCAG's relative luminance), and where it is.
() => {
  const rgb = (c) => c.match(/[\d.]+/g).map(Number);
  const luminance = (c) => {
    const v = rgb(c).slice(0, 3).map((x) => {
      x /= 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  };
  const background = (e) => {
    for (; e; e = e.parentElement) {
      const b = getComputedStyle(e).backgroundColor;
      if (rgb(b)[3] !== 0) { return b; }
    }
    return "rgb(255, 255, 255)";
  };
  let lowest = 21;
  let where = "";
  for (const e of document.querySelectorAll("body *")) {
    const text = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!text || !e.getClientRects().length || e.closest("[disabled], .skip")) { continue; }
    const pair = [luminance(getComputedStyle(e).color), luminance(background(e))];
    const [a, b] = pair.sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < lowest) {
      lowest = ratio;
      where = e.tagName + " " + e.textContent.trim().slice(0, 30);
    }
  }
  return [lowest, where];
}
