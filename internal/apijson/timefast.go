package apijson

import "time"

// rfc3339UTC parses the API's usual date-time, "2006-01-02T15:04:05Z" with an
// optional fraction of 1 to 9 digits and a "Z" or ±hh:mm offset, without the
// string conversion, the layout dispatch, the zone lookup and the calendar
// arithmetic of the year check that TimeText spends on it: dates are most of a
// record's values. It accepts exactly what time.Parse(time.RFC3339) accepts in
// its own fast path and gives the same instant, in UTC; ok is false for anything
// else (other layouts, a year that an offset could push out of [1, 9999]), which
// TimeText then reads.
func rfc3339UTC(s []byte) (t time.Time, ok bool) {
	if len(s) < len("2006-01-02T15:04:05Z") ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := num(s[0:4])
	month, ok2 := num(s[5:7])
	day, ok3 := num(s[8:10])
	hour, ok4 := num(s[11:13])
	minute, ok5 := num(s[14:16])
	sec, ok6 := num(s[17:19])
	// Years 1 and 9999 are left to TimeText: an offset can move them out of range.
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 2 || year > 9998 ||
		month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	s = s[19:]
	nsec := 0
	if s[0] == '.' {
		n := 1
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			nsec = nsec*10 + int(s[n]-'0')
			n++
		}
		if n == 1 || n > 10 { // no digit, or more than time.Parse keeps
			return time.Time{}, false
		}
		for range 10 - n {
			nsec *= 10
		}
		s = s[n:]
	}
	offset := 0
	switch {
	case len(s) == 1 && s[0] == 'Z':
	case len(s) == len("+07:00") && (s[0] == '+' || s[0] == '-') && s[3] == ':':
		hh, okh := num(s[1:3])
		mm, okm := num(s[4:6])
		if !okh || !okm || hh > 23 || mm > 59 {
			return time.Time{}, false
		}
		offset = (hh*60 + mm) * 60
		if s[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	// time.Unix(…).UTC() is the time.Date(…, time.UTC) of these fields, less the
	// offset, without Date's normalisation of each of them.
	unix := (unixDays(year, month, day)*24+int64(hour))*3600 + int64(minute*60+sec-offset)
	return time.Unix(unix, int64(nsec)).UTC(), true
}

// unixDays is the number of days from 1970-01-01 to a valid date of a year from
// 1 on (days_from_civil, in Howard Hinnant's "chrono-Compatible Low-Level Date
// Algorithms"): years taken from March, so that the leap day ends them.
func unixDays(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400
	yoe := year - era*400  // [0, 399]
	mp := (month + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// num is the value of a run of decimal digits; ok is false if s holds another byte.
func num(s []byte) (int, bool) {
	v := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// daysIn is the number of days of month in year, as time.Date counts them.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
