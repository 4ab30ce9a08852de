// Callbacks for all-types.json: onText uses every attribute of utils.set.
function onText(value) {
  utils.set("t_paragraph", { label: "Paragraph for " + value, hint: "hint for " + utils.get("t_text") });
  utils.set("t_number", { min: 2, max: 4 });
  utils.set("t_dropdown", { values: ["two"], value: "two" });
  utils.set("t_radio", { values: ["red"], value: "red" });
  utils.set("t_multi", { value: ["b", "c"] });
  utils.set("t_checkbox", { value: true });
  utils.set("t_hidden", { visible: true, required: true, value: "shown" });
  utils.set("t_email", { disabled: true });
  return value === "bad" ? "text is bad" : "";
}

const onCheckbox = (checked) => checked === true ? "" : "must stay checked";
