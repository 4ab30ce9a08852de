package iparams

// Type is the input type of a parameter.
type Type string

// The thirteen input types of the specification.
const (
	Text        Type = "text"
	Paragraph   Type = "paragraph"
	Dropdown    Type = "dropdown"
	Email       Type = "email"
	Number      Type = "number"
	PhoneNumber Type = "phone_number"
	Date        Type = "date"
	URL         Type = "url"
	Radio       Type = "radio"
	Checkbox    Type = "checkbox"
	Multiselect Type = "multiselect"
	Domain      Type = "domain"
	APIKey      Type = "api_key"
)

// Types lists every type in the specification's order.
func Types() []Type {
	return []Type{Text, Paragraph, Dropdown, Email, Number, PhoneNumber, Date, URL,
		Radio, Checkbox, Multiselect, Domain, APIKey}
}

// Known reports whether t is one of the thirteen types.
func (t Type) Known() bool {
	for _, k := range Types() {
		if t == k {
			return true
		}
	}
	return false
}

// HasOptions reports whether the type takes its values from options.
func (t Type) HasOptions() bool { return t == Radio || t == Dropdown || t == Multiselect }

// NeedsProduct reports whether type_attributes.product is required.
func (t Type) NeedsProduct() bool { return t == Domain || t == APIKey }

// CanBeSecure reports whether a value of the type can be secure: free text only.
// Options are published in the declaration, and a secure number, date or checkbox
// would be of no use outside a request header.
func (t Type) CanBeSecure() bool {
	switch t {
	case Text, Paragraph, Email, PhoneNumber, URL, APIKey:
		return true
	}
	return false
}
