// Copy buttons: <button data-copy-target="ID"> copies the text of #ID; an element with
// data-copy-status="ID" announces the result to screen readers. No other script on the dashboard.
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
