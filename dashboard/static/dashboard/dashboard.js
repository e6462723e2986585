// Copy buttons: <button data-copy-target="ID"> copies the text of #ID; an element with
// data-copy-status="ID" announces the result to screen readers. And the confirmation code below.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy-target]");
  if (!button) return;
  const id = button.dataset.copyTarget;
  const source = document.getElementById(id);
  const status = document.querySelector(`[data-copy-status="${id}"]`);
  const text = source ? source.textContent.trim() : "";
  let copied = false;
  try {
    await navigator.clipboard.writeText(text);
    copied = true;
  } catch (error) {
    // navigator.clipboard needs a secure context; elsewhere select the text so Ctrl+C works.
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  button.textContent = copied ? "Copied" : "Press Ctrl+C";
  if (status) status.textContent = copied ? "Copied to the clipboard." : "The key is selected: press Ctrl+C (⌘C) to copy it.";
  setTimeout(() => { button.textContent = "Copy"; }, 2500);
});

// The e-mail confirmation link carries its code in the fragment, which browsers never send (so no log records it):
// put it in the form's field and drop it from the address bar. Never post it: the visitor clicks, then sees the
// address it confirms and clicks again (a link someone else sent must not log anyone in by itself).
document.addEventListener("DOMContentLoaded", () => {
  const field = document.querySelector("[data-code-from-fragment]");
  const code = decodeURIComponent(window.location.hash.slice(1));
  if (!field || !code) return;
  field.value = code;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  field.form.querySelector("[type=submit]")?.focus();
});
